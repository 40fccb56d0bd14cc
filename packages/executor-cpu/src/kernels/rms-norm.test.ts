import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { thrownSubject as subject } from "@attngraph/testkit/test-helpers";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const call = (x: Tensor, w: Tensor | undefined, eps = 1e-6, out?: Tensor) =>
  cpu.dispatch({ kind: "rms-norm", node: "norm", attrs: { eps }, inputs: [x, w], outShape: x.shape, out }) as Tensor;

describe("rms-norm kernels", () => {
  it("x / sqrt(mean(x²) + eps) · weight; a zero row gives zeros; in place", () => {
    const x = Tensor.from([3, 4, 0, 0], [2, 2]); // rms of [3, 4] is sqrt(12.5)
    const got = call(x, Tensor.from([1, 2], [2]), 0.5).toArray(); // sqrt(12.5 + 0.5) = sqrt(13)
    expect(got[0]).toBeCloseTo(3 / Math.sqrt(13), 6);
    expect(got[1]).toBeCloseTo(8 / Math.sqrt(13), 6);
    expect(got.slice(2)).toEqual([0, 0]);
    const y = Tensor.from([1, -1], [1, 2]);
    expect(call(y, undefined, 1e-6, y)).toBe(y);
    expect(y.toArray().map((v) => Math.round(v * 1e5) / 1e5)).toEqual([1, -1]);
  });

  it("a weight of the wrong length and a bad eps are errors naming the field", () => {
    const x = Tensor.from([1, 2, 3], [1, 3]);
    expect(subject(() => call(x, Tensor.from([1, 2], [2])))).toBe("norm.weight");
    expect(subject(() => call(x, undefined, 0))).toBe("norm.eps");
  });

  it("the gradients: a constant row of x gives dx ⊥ x (the scale's direction is normalised away); dw sums grad ⊙ x̂", () => {
    const x = Tensor.from([2, 2, 2, 2, 1, -1, 1, -1], [2, 4]);
    const g = Tensor.from([1, 1, 1, 1, 1, 0, 0, 0], [2, 4]);
    const dx = (
      cpu.dispatch({
        kind: "rms-norm-grad",
        node: "n.grad",
        attrs: { eps: 1e-12 },
        inputs: [g, x, undefined],
        outShape: [2, 4],
      }) as Tensor
    ).toArray();
    dx.slice(0, 4).forEach((v) => expect(Math.abs(v)).toBeLessThan(1e-6)); // g ∥ x: moving along x changes nothing
    const dw = (
      cpu.dispatch({
        kind: "rms-norm-weight-grad",
        node: "n.w.grad",
        attrs: { eps: 1e-12 },
        inputs: [g, x],
        outShape: [4],
      }) as Tensor
    ).toArray();
    expect(dw.map((v) => Math.round(v * 1e5) / 1e5)).toEqual([2, 1, 1, 1]); // x̂ of row 0 is 1s, of row 1 is ±1
  });
});
