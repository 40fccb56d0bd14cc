import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { reshapeKernel } from "./reshape.js";

const x = Tensor.from(
  Array.from({ length: 24 }, (_, i) => i),
  [2, 3, 4],
);

describe("reshape kernel", () => {
  const run = (t: Tensor, shape: number[]) =>
    reshapeKernel({ kind: "reshape", node: "split", attrs: { shape }, inputs: [t], outShape: shape });

  it("is a view of a contiguous input", () => {
    const y = run(x, [2, 3, 2, 2]); // split heads: [B, L, E] → [B, L, H, D]
    expect(y.shape).toEqual([2, 3, 2, 2]);
    expect(y.data).toBe(x.data);
    expect(y.toArray()).toEqual(x.toArray());
  });

  it("copies when the strides forbid a view (merging transposed heads)", () => {
    const t = x.permute([1, 0, 2]); // [3, 2, 4]
    const y = run(t, [3, 8]);
    expect(y.data).not.toBe(x.data);
    expect(y.toArray()).toEqual(t.toArray());
  });

  it("rejects a shape with another element count, naming the node", () => {
    expect(() => run(x, [5, 5])).toThrow(/split\.shape: element count/);
  });
});
