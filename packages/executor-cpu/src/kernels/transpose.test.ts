import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const x = Tensor.from(
  Array.from({ length: 24 }, (_, i) => i),
  [2, 3, 4],
);

describe("transpose kernel", () => {
  const run = (t: Tensor, perm: unknown) =>
    cpu.dispatch({
      kind: "transpose",
      node: "heads",
      attrs: { perm },
      inputs: [t],
      outShape: Array.isArray(perm) ? perm.map((p: number) => t.shape[p] ?? 0) : [],
    });

  it("permutes axes as a view", () => {
    const y = run(x, [0, 2, 1]);
    expect(y.shape).toEqual([2, 4, 3]);
    expect(y.data).toBe(x.data);
    expect(y.get(1, 3, 2)).toBe(x.get(1, 2, 3));
    expect(y.toArray().slice(0, 6)).toEqual([0, 4, 8, 1, 5, 9]);
  });

  it.each([[[0, 1]], [[0, 1, 1]], [[0, 1, 3]], ["0,1,2"]])("rejects perm %j with an attr error", (perm) => {
    expect(() => run(x, perm)).toThrow(AttnGraphError);
    expect(() => run(x, perm)).toThrow(/heads\.perm/);
  });
});
