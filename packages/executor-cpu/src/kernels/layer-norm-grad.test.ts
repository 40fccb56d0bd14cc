import { describe, expect, it } from "vitest";
import { Tensor, compare, type Shape } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import { thrownSubject as subject } from "@attngraph/testkit/test-helpers";
import { dispatchCpu } from "../test-dispatch.js";

const rand = (shape: Shape, seed: number, shift = 0) => {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => shift + next() * 2 - 1),
    shape,
  );
};

const run = (grad: Tensor, x: Tensor, weight?: Tensor, eps = 1e-5) =>
  dispatchCpu("layer-norm-grad", "ln1.grad", { eps }, [grad, x, weight], x.shape);

/** The float64 reference, straight from the formula: dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), ĝ = grad ⊙ weight. */
function layerNormGrad64(grad: Tensor, x: Tensor, weight: Tensor | undefined, eps: number): number[] {
  const n = x.shape.at(-1)!;
  const xv = x.toArray();
  const gv = grad.toArray();
  const w = weight?.toArray();
  const out: number[] = [];
  for (let r = 0; r < xv.length / n; r++) {
    const row = xv.slice(r * n, r * n + n);
    const mean = row.reduce((a, b) => a + b, 0) / n;
    const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
    const rstd = 1 / Math.sqrt(variance + eps);
    const xh = row.map((v) => (v - mean) * rstd);
    const gh = xh.map((_, j) => gv[r * n + j]! * (w?.[j] ?? 1));
    const mg = gh.reduce((a, b) => a + b, 0) / n;
    const mgx = gh.reduce((a, b, j) => a + b * xh[j]!, 0) / n;
    for (let j = 0; j < n; j++) out.push(rstd * (gh[j]! - mg - xh[j]! * mgx));
  }
  return out;
}

const near = (got: Tensor, want: readonly number[]) => {
  const r = compare(got, want, { abs: 1e-5, rel: 1e-4 });
  expect(r.ok, JSON.stringify(r.worst)).toBe(true);
};

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
