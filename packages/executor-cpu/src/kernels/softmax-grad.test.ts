import { describe, expect, it } from "vitest";
import { Tensor, type Shape } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import { thrownSubject as subject, expectNear as near } from "@attngraph/testkit/test-helpers";
import { dispatchCpu } from "../test-dispatch.js";

const rand = (shape: Shape, seed: number, lo = -1, hi = 1) => {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => lo + next() * (hi - lo)),
    shape,
  );
};

const run = (y: Tensor, grad: Tensor, scale = 1) =>
  dispatchCpu("softmax-grad", "scores.grad", { scale }, [y, grad], y.shape);

/** The float64 reference: per row, scale · y ⊙ (grad − Σ grad ⊙ y). */
function softmaxGrad64(y: Tensor, grad: Tensor, scale: number): number[] {
  const n = y.shape.at(-1)!;
  const yv = y.toArray();
  const gv = grad.toArray();
  const out: number[] = [];
  for (let r = 0; r < yv.length / n; r++) {
    let dot = 0;
    for (let j = 0; j < n; j++) dot += gv[r * n + j]! * yv[r * n + j]!;
    for (let j = 0; j < n; j++) out.push(scale * yv[r * n + j]! * (gv[r * n + j]! - dot));
  }
  return out;
}

/** A softmax output: rows of positive weights summing to 1. */
function probs(shape: Shape, seed: number): Tensor {
  const t = rand(shape, seed, 0.1, 1).toArray();
  const n = shape.at(-1)!;
  for (let r = 0; r < t.length / n; r++) {
    const s = t.slice(r * n, r * n + n).reduce((a, b) => a + b, 0);
    for (let j = 0; j < n; j++) t[r * n + j]! /= s;
  }
  return Tensor.from(t, shape);
}

describe("softmax-grad kernel", () => {
  it("matches the float64 reference, with the scale", () => {
    const y = probs([2, 3, 5], 1);
    const g = rand([2, 3, 5], 2);
    near(run(y, g, 0.125), softmaxGrad64(y, g, 0.125));
    near(run(y, g), softmaxGrad64(y, g, 1));
  });

  it("is the softmax's Jacobian: a constant gradient gives 0", () => {
    const y = probs([4, 6], 3);
    const got = run(y, Tensor.from(new Array(24).fill(2.5), [4, 6])).toArray();
    got.forEach((v) => expect(Math.abs(v)).toBeLessThan(1e-6));
  });

  it("reads transposed (strided) inputs", () => {
    const y = probs([6, 4], 4).transpose(0, 1); // [4, 6], columns do not sum to 1, which does not matter
    const g = rand([6, 4], 5).transpose(0, 1); // [4, 6]
    expect(y.isContiguous() || g.isContiguous()).toBe(false);
    near(run(y, g, 0.5), softmaxGrad64(y, g, 0.5));
  });

  it("gives exactly +0 for a fully masked row (y all 0), whatever its gradient, never NaN", () => {
    const y = Tensor.from([0, 0, 0, 0.25, 0.75, 0], [2, 3]);
    const g = Tensor.from([NaN, Infinity, -3, 1, 2, 3], [2, 3]);
    const got = run(y, g, 0.5).toArray();
    expect(got.slice(0, 3)).toEqual([0, 0, 0]);
    expect(got.slice(0, 3).every((v) => Object.is(v, 0))).toBe(true);
    near(
      Tensor.from(got.slice(3), [3]),
      softmaxGrad64(Tensor.from([0.25, 0.75, 0], [3]), Tensor.from([1, 2, 3], [3]), 0.5),
    );
  });

  it("propagates NaN through its row only", () => {
    const y = Tensor.from([0.5, 0.5, 0, 0.2, 0.8, 0], [2, 3]);
    const g = Tensor.from([1, NaN, 0, 1, 2, 3], [2, 3]);
    const got = run(y, g).toArray();
    expect(got[0]).toBeNaN();
    expect(got[1]).toBeNaN();
    expect(got.slice(3).some(Number.isNaN)).toBe(false);
  });

  it("rejects operands of different shapes and a non-finite scale, naming the node", () => {
    const y = probs([2, 3], 1);
    expect(subject(() => run(y, rand([3, 2], 2)))).toBe("scores.grad.grad");
    expect(subject(() => run(y, rand([2, 3], 2), NaN))).toBe("scores.grad.scale");
  });
});
