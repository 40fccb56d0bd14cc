import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { reluKernel } from "./relu.js";

const run = (x: Tensor, out?: Tensor) => reluKernel({ kind: "relu", node: "mlp.act", attrs: {}, inputs: [x], outShape: x.shape, out }) as Tensor;

describe("relu kernel", () => {
  it("is max(x, 0) exactly; NaN and +∞ kept, −∞ and −0 give +0 (torch.relu)", () => {
    const got = run(Tensor.from([-2, -0, 0, 1e-30, 3.5, NaN, Infinity, -Infinity, -1e-45], [9])).toArray();
    expect(got).toEqual([0, 0, 0, Math.fround(1e-30), 3.5, NaN, Infinity, 0, 0]);
    expect(Object.is(got[1], 0)).toBe(true);
  });

  it("reads a transposed (strided) input and writes row-major", () => {
    const x = Tensor.from([-1, 2, -3, 4, 5, -6], [2, 3]).transpose(0, 1); // [[-1, 4], [2, 5], [-3, -6]]
    expect(x.isContiguous()).toBe(false);
    expect(run(x).toArray()).toEqual([0, 4, 2, 5, 0, 0]);
  });

  it("runs in place: out may be x's memory", () => {
    const x = Tensor.from([-1, 2, NaN, -4], [4]);
    expect(run(x, x)).toBe(x);
    expect(x.toArray()).toEqual([0, 2, NaN, 0]);
  });

  it("rejects an int32 input, naming node and field", () => {
    try {
      run(Tensor.int32([1, -2], [2]) as unknown as Tensor);
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect((e as AttnGraphError).subject).toBe("mlp.act.x");
    }
  });
});
