import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { thrownSubject as subject } from "@attngraph/testkit/test-helpers";
import { dispatchCpu } from "../test-dispatch.js";
import { near, normalizedRows64, rand } from "../test-layer-norm64.js";

const run = (grad: Tensor, x: Tensor, weight?: Tensor, eps = 1e-5) =>
  dispatchCpu("layer-norm-grad", "ln1.grad", { eps }, [grad, x, weight], x.shape);

/** The float64 reference, straight from the formula: dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), ĝ = grad ⊙ weight. */
function layerNormGrad64(grad: Tensor, x: Tensor, weight: Tensor | undefined, eps: number): number[] {
  const n = x.shape.at(-1)!;
  const gv = grad.toArray();
  const w = weight?.toArray();
  return normalizedRows64(x, eps).flatMap(({ xh, rstd }, r) => {
    const gh = xh.map((_, j) => gv[r * n + j]! * (w?.[j] ?? 1));
    const mg = gh.reduce((a, b) => a + b, 0) / n;
    const mgx = gh.reduce((a, b, j) => a + b * xh[j]!, 0) / n;
    return gh.map((g, j) => rstd * (g - mg - xh[j]! * mgx));
  });
}

describe("layer-norm-grad kernel", () => {
  it("matches the float64 reference with and without a weight", () => {
    const grad = rand([2, 3, 8], 1);
    const x = rand([2, 3, 8], 2, 0.5);
    const w = rand([8], 3, 1);
    near(run(grad, x), layerNormGrad64(grad, x, undefined, 1e-5));
    near(run(grad, x, w, 1e-3), layerNormGrad64(grad, x, w, 1e-3));
  });

  it("sums to 0 over each row (a shift of the input does not change its layer norm)", () => {
    const got = run(rand([4, 16], 4), rand([4, 16], 5)).toArray();
    for (let r = 0; r < 4; r++)
      expect(Math.abs(got.slice(r * 16, r * 16 + 16).reduce((a, b) => a + b, 0))).toBeLessThan(1e-5);
  });

  it("reads strided inputs: transposed grad and x, a strided weight", () => {
    const grad = rand([6, 3], 6).transpose(0, 1); // [3, 6]
    const x = rand([6, 3], 7).transpose(0, 1);
    const wStrided = new Tensor(rand([13], 8, 1).toFloat32Array(), [6], [2], 1); // every other value, from index 1
    expect(grad.isContiguous() || x.isContiguous()).toBe(false);
    near(run(grad, x, wStrided), layerNormGrad64(grad, x, wStrided, 1e-5));
  });

  it("stays finite on a constant row (variance 0: rstd = 1/sqrt(eps))", () => {
    const got = run(rand([1, 4], 9), Tensor.from([3, 3, 3, 3], [1, 4]));
    expect(got.toArray().every(Number.isFinite)).toBe(true);
    near(got, layerNormGrad64(rand([1, 4], 9), Tensor.from([3, 3, 3, 3], [1, 4]), undefined, 1e-5));
  });

  it("rejects mismatched shapes, a bad weight and a bad eps, naming node and field", () => {
    const x = rand([2, 4], 1);
    expect(subject(() => run(rand([2, 5], 2), x))).toBe("ln1.grad.x");
    expect(subject(() => run(rand([2, 4], 2), x, rand([5], 3)))).toBe("ln1.grad.weight");
    expect(subject(() => run(rand([2, 4], 2), x, undefined, 0))).toBe("ln1.grad.eps");
  });
});
