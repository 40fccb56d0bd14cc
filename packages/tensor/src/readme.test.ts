// The README's example, kept runnable: if this fails, fix the README too.
import { expect, it, vi } from "vitest";
import { compare, Tensor } from "./index.js";

it("runs the README example with the output it shows", () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  // [L, E] = [2, 3]
  const x = Tensor.fromNested([
    [0.43, 0.15, 0.89],
    [0.55, 0.87, 0.66],
  ]);
  const xt = x.transpose(0, 1); // [E, L], a view: same data, strides [1, 3]
  console.log(xt.data === x.data, xt.isContiguous()); // true false
  console.log(String(xt));
  const flat = xt.reshape([-1]); // not expressible as a view of xt, so a row-major copy
  console.log(flat.data === x.data, flat.toArray().length); // false 6
  const c = compare(flat, [0.43, 0.55, 0.15, 0.87, 0.89, 0.66], { abs: 1e-6, rel: 1e-6 });
  console.log(c.ok, c.failures); // true 0
  const printed = log.mock.calls;
  log.mockRestore();
  expect(printed).toEqual([
    [true, false],
    ["tensor([[0.4300, 0.5500],\n        [0.1500, 0.8700],\n        [0.8900, 0.6600]])"],
    [false, 6],
    [true, 0],
  ]);
});
