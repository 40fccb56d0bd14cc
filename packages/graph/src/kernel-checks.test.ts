import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import {
  checkDropoutAttrs,
  checkMaskAttrs,
  checkScale,
  expectHeadGroups,
  expectRank,
  maskOffset,
  windowOf,
  checkGradScale,
} from "./kernel-checks.js";
import {
  checkIntAttr,
  checkPadAttrs,
  checkSumToShape,
  expectAxis,
  expectCrossEntropyShapes,
  expectLeadingShape,
  expectLinearWeightGradShapes,
  expectLossGradShape,
  expectSameShape,
} from "./kernel-checks-backward.js";
import {
  checkClipByNormAttrs,
  checkGradAccumulateAttrs,
  checkLrScaleValue,
  expectScalarShape,
  checkAdamMomentAttrs,
  checkAdamStepAttrs,
  checkOptimizerStepValue,
  checkSgdMomentumAttrs,
  checkSgdStepAttrs,
  expectStepShape,
} from "./kernel-checks-optim.js";

const call = (attrs: Record<string, unknown>) => ({ node: "n", kind: "mask", attrs });
const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as AttnGraphError;
  }
  throw new Error("did not throw");
};

describe("kernel checks shared by the executors", () => {
  it("name the node and field, with expected and got", () => {
    expect(thrown(() => checkMaskAttrs(call({ causal: false, window: 2, alignment: "top-left" }))).message).toBe(
      "n.window: invalid attribute of op mask, expected a sliding window only with causal: true, got 2",
    );
    expect(thrown(() => checkScale(call({ scale: NaN }))).message).toBe(
      "n.scale: invalid attribute of op mask, expected a finite number, got NaN",
    );
    expect(thrown(() => checkDropoutAttrs(call({ rate: 1, seed: 0, training: true }))).subject).toBe("n.rate");
    expect(thrown(() => expectRank(call({}), "scores", { shape: [2, 3] }, 4, "[B, H, L, S]")).message).toBe(
      "n.scores: op mask needs rank 4, expected [B, H, L, S], got [2, 3]",
    );
    expect(() => expectHeadGroups(call({}), "k", 4, 3, { shape: [1, 3, 2, 2] })).toThrow(
      /query heads H must be a multiple/,
    );
  });

  it("accept good attributes, with defaults for the fused attention's optional dropout", () => {
    expect(checkMaskAttrs(call({ causal: true, alignment: "bottom-right" }))).toEqual({
      causal: true,
      window: null,
      alignment: "bottom-right",
    });
    expect(
      checkDropoutAttrs(
        call({}),
        { rate: "dropoutRate", seed: "dropoutSeed", training: "training" },
        { rate: 0, seed: 0, training: false },
      ),
    ).toEqual({ rate: 0, seed: 0, training: false });
    expect(maskOffset("bottom-right", 3, 5)).toBe(2);
    expect(maskOffset("top-left", 3, 5)).toBe(0);
    expect(windowOf({ causal: true, window: 3 })).toBe(3);
    expect(windowOf({ causal: false, window: null })).toBe(0);
  });
});

const op = (kind: string, attrs: Record<string, unknown> = {}, outShape: readonly number[] = []) => ({
  node: "n",
  kind,
  attrs,
  outShape,
});
const shaped = (...shape: number[]) => ({ shape });
/** [code, subject] of what `f` throws. */
const codeOf = (f: () => unknown) => {
  const e = thrown(f);
  expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
  return [e.code, e.subject];
};

describe("kernel checks of the backward ops", () => {
  it("expectSameShape: one shape, else a shape error naming the field", () => {
    expect(() => expectSameShape(op("gelu-grad"), "x", shaped(2, 3), shaped(2, 3))).not.toThrow();
    expect(() => expectSameShape(op("gelu-grad"), "x", shaped(), shaped())).not.toThrow();
    expect(thrown(() => expectSameShape(op("gelu-grad"), "x", shaped(2, 3), shaped(3, 2))).message).toBe(
      "n.x: shape must match, expected [2, 3], got [3, 2]",
    );
    expect(codeOf(() => expectSameShape(op("gelu-grad"), "x", shaped(2, 3), shaped(2, 3, 1)))).toEqual([
      "shape",
      "n.x",
    ]);
  });

  it("expectAxis and expectLeadingShape", () => {
    expect(() => expectAxis(op("softmax-grad"), "y", shaped(0))).not.toThrow();
    expect(thrown(() => expectAxis(op("softmax-grad"), "y", shaped(), "[..., S]")).message).toBe(
      "n.y: op softmax-grad needs at least one axis, expected [..., S], got []",
    );
    const what = "grad must be the ids' shape plus the embedding axis";
    expect(() => expectLeadingShape(op("embedding-grad"), "grad", what, [2, 3], shaped(2, 3, 8))).not.toThrow();
    expect(() => expectLeadingShape(op("embedding-grad"), "grad", what, [], shaped(8))).not.toThrow();
    expect(thrown(() => expectLeadingShape(op("embedding-grad"), "grad", what, [2, 3], shaped(3, 3, 8))).message).toBe(
      `n.grad: ${what}, expected [2, 3] plus one axis, got [3, 3, 8]`,
    );
    expect(codeOf(() => expectLeadingShape(op("embedding-grad"), "grad", what, [2, 3], shaped(2, 3)))).toEqual([
      "shape",
      "n.grad",
    ]);
  });

  it("checkGradScale: absent is 1, else a finite number", () => {
    expect(checkGradScale(op("softmax-grad"))).toBe(1);
    expect(checkGradScale(op("softmax-grad", { scale: 0.25 }))).toBe(0.25);
    for (const scale of [NaN, Infinity, "2", null])
      expect(codeOf(() => checkGradScale(op("mask-grad", { scale })))).toEqual(["attr", "n.scale"]);
  });

  it("checkIntAttr and checkPadAttrs: integers, the axis counted from the front", () => {
    expect(checkIntAttr(op("embedding-grad", { rows: 5 }), "rows", 1)).toBe(5);
    expect(thrown(() => checkIntAttr(op("embedding-grad", { rows: 0 }), "rows", 1)).message).toBe(
      "n.rows: invalid attribute of op embedding-grad, expected an integer >= 1, got 0",
    );
    for (const rows of [1.5, "5", undefined, 2 ** 53])
      expect(codeOf(() => checkIntAttr(op("embedding-grad", { rows }), "rows", 1))).toEqual(["attr", "n.rows"]);
    expect(checkPadAttrs(op("pad", { axis: -1, before: 2, after: 0 }), 3)).toEqual({ axis: 2, before: 2, after: 0 });
    expect(checkPadAttrs(op("pad", { axis: 0, before: 0, after: 4 }), 1)).toEqual({ axis: 0, before: 0, after: 4 });
    expect(thrown(() => checkPadAttrs(op("pad", { axis: 3, before: 0, after: 0 }), 3)).message).toBe(
      "n.axis: invalid attribute of op pad, expected an integer in -3..2, got 3",
    );
    expect(thrown(() => checkPadAttrs(op("pad", { axis: 0, before: 0, after: 0 }), 0)).message).toBe(
      "n.axis: invalid attribute of op pad, expected no axis: x is a scalar, got 0",
    );
    expect(codeOf(() => checkPadAttrs(op("pad", { axis: -4, before: 0, after: 0 }), 3))).toEqual(["attr", "n.axis"]);
    expect(codeOf(() => checkPadAttrs(op("pad", { axis: 0, before: -1, after: 0 }), 3))).toEqual(["attr", "n.before"]);
    expect(codeOf(() => checkPadAttrs(op("pad", { axis: 0, before: 0, after: 0.5 }), 3))).toEqual(["attr", "n.after"]);
  });

  it("checkSumToShape: the outShape x broadcasts from", () => {
    const x = shaped(2, 3, 4);
    for (const to of [[4], [3, 1], [1, 1, 4], [2, 3, 4], []])
      expect(checkSumToShape(op("sum-to", {}, to), x)).toEqual(to);
    expect(thrown(() => checkSumToShape(op("sum-to", {}, [1, 2, 3, 4]), x)).message).toBe(
      "n.shape: sum-to cannot add axes, expected rank <= 3, got [1, 2, 3, 4]",
    );
    expect(thrown(() => checkSumToShape(op("sum-to", {}, [2, 4]), x)).message).toBe(
      "n.shape: dim 0 must equal x's or be 1, expected 3 or 1, got 2 in [2, 4]",
    );
  });

  it("expectLinearWeightGradShapes: grad [..., Out] and x [..., In] with the same leading axes", () => {
    const call = op("linear-weight-grad");
    expect(() => expectLinearWeightGradShapes(call, shaped(2, 5, 3), shaped(2, 5, 4))).not.toThrow();
    expect(() => expectLinearWeightGradShapes(call, shaped(3), shaped(4))).not.toThrow();
    expect(codeOf(() => expectLinearWeightGradShapes(call, shaped(), shaped(4)))).toEqual(["shape", "n.grad"]);
    expect(codeOf(() => expectLinearWeightGradShapes(call, shaped(2, 5, 3), shaped(10, 4)))).toEqual(["shape", "n.x"]);
    expect(thrown(() => expectLinearWeightGradShapes(call, shaped(2, 5, 3), shaped(2, 6, 4))).message).toBe(
      "n.x: x dim 1 must match the gradient's, expected 5, got 6 in [2, 6, 4]",
    );
  });

  it("expectCrossEntropyShapes and expectLossGradShape", () => {
    const call = op("cross-entropy-grad");
    expect(() => expectCrossEntropyShapes(call, shaped(2, 3, 5), shaped(2, 3))).not.toThrow();
    expect(codeOf(() => expectCrossEntropyShapes(call, shaped(5), shaped()))).toEqual(["shape", "n.logits"]);
    expect(codeOf(() => expectCrossEntropyShapes(call, shaped(2, 5), shaped(3)))).toEqual(["shape", "n.targets"]);
    expect(thrown(() => expectCrossEntropyShapes(call, shaped(2, 3, 5), shaped(2, 3, 1))).message).toBe(
      "n.targets: targets must have the logits' shape without the class axis, expected [2, 3], got [2, 3, 1]",
    );
    const t = shaped(2, 3);
    expect(() => expectLossGradShape(call, shaped(), t, "mean")).not.toThrow();
    expect(() => expectLossGradShape(call, shaped(2, 3), t, "none")).not.toThrow();
    expect(codeOf(() => expectLossGradShape(call, shaped(2, 3), t, "sum"))).toEqual(["shape", "n.grad"]);
    expect(codeOf(() => expectLossGradShape(call, shaped(), t, "none"))).toEqual(["shape", "n.grad"]);
    expect(codeOf(() => expectLossGradShape(call, shaped(2, 4), t, "none"))).toEqual(["shape", "n.grad"]);
  });
});

describe("kernel checks of the optimizer ops", () => {
  it("fill in the declared defaults; only the required attributes must be given", () => {
    expect(checkAdamMomentAttrs(op("adam-moment", { beta: 0.9 }))).toEqual({
      beta: 0.9,
      square: false,
      weightDecay: 0,
    });
    expect(checkAdamStepAttrs(op("adam-step", { lr: 1e-3 }))).toEqual({
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0,
      decoupled: false,
    });
    expect(checkSgdMomentumAttrs(op("sgd-momentum", { momentum: 0 }))).toEqual({
      momentum: 0,
      dampening: 0,
      weightDecay: 0,
    });
    expect(checkSgdStepAttrs(op("sgd-step", { lr: 0.1 }))).toEqual({
      lr: 0.1,
      momentum: 0,
      nesterov: false,
      weightDecay: 0,
    });
    const full = { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.01 };
    expect(checkSgdStepAttrs(op("sgd-step", full))).toEqual(full);
    expect(checkAdamMomentAttrs(op("adam-moment", { beta: 0, square: true, weightDecay: 0.5 }))).toEqual({
      beta: 0,
      square: true,
      weightDecay: 0.5,
    });
  });

  it("name the bad attribute, with the rule it breaks", () => {
    const bad: [() => unknown, string][] = [
      [() => checkAdamMomentAttrs(op("adam-moment", {})), "beta"],
      [() => checkAdamMomentAttrs(op("adam-moment", { beta: 1 })), "beta"],
      [() => checkAdamMomentAttrs(op("adam-moment", { beta: 0.9, square: 1 })), "square"],
      [() => checkAdamMomentAttrs(op("adam-moment", { beta: 0.9, weightDecay: -1 })), "weightDecay"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: 0 })), "lr"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: Infinity })), "lr"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: 1, beta1: -0.1 })), "beta1"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: 1, beta2: 1 })), "beta2"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: 1, eps: NaN })), "eps"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: 1, weightDecay: Infinity })), "weightDecay"],
      [() => checkAdamStepAttrs(op("adam-step", { lr: 1, decoupled: "yes" })), "decoupled"],
      [() => checkSgdMomentumAttrs(op("sgd-momentum", {})), "momentum"],
      [() => checkSgdMomentumAttrs(op("sgd-momentum", { momentum: 0.9, dampening: 1.5 })), "dampening"],
      [() => checkSgdMomentumAttrs(op("sgd-momentum", { momentum: 0.9, weightDecay: -1 })), "weightDecay"],
      [() => checkSgdStepAttrs(op("sgd-step", {})), "lr"],
      [() => checkSgdStepAttrs(op("sgd-step", { lr: 1, momentum: -1 })), "momentum"],
      [() => checkSgdStepAttrs(op("sgd-step", { lr: 1, nesterov: 0 })), "nesterov"],
      [() => checkSgdStepAttrs(op("sgd-step", { lr: 1, nesterov: true })), "nesterov"],
      [() => checkSgdStepAttrs(op("sgd-step", { lr: 1, weightDecay: -1 })), "weightDecay"],
    ];
    for (const [f, field] of bad) expect(codeOf(f), field).toEqual(["attr", `n.${field}`]);
    expect(thrown(() => checkAdamStepAttrs(op("adam-step", { lr: 1, beta1: 1 }))).message).toBe(
      "n.beta1: invalid attribute of op adam-step, expected a number with 0 <= beta1 < 1, got 1",
    );
    expect(thrown(() => checkSgdMomentumAttrs(op("sgd-momentum", { momentum: 0.9, dampening: 2 }))).message).toBe(
      "n.dampening: invalid attribute of op sgd-momentum, expected a number with 0 <= dampening <= 1, got 2",
    );
    expect(thrown(() => checkSgdStepAttrs(op("sgd-step", { lr: 1, nesterov: true }))).message).toBe(
      "n.nesterov: invalid attribute of op sgd-step, expected false with momentum 0 (Nesterov momentum needs a momentum), got true",
    );
  });

  it("the step: one number, an integer >= 1", () => {
    expect(() => expectStepShape(op("adam-step"), shaped())).not.toThrow();
    expect(() => expectStepShape(op("adam-step"), shaped(1))).not.toThrow();
    expect(thrown(() => expectStepShape(op("adam-step"), shaped(2))).message).toBe(
      "n.step: op adam-step takes the step count as one number, expected [] or [1], got [2]",
    );
    expect(codeOf(() => expectStepShape(op("sgd-momentum"), shaped(1, 1)))).toEqual(["shape", "n.step"]);
    expect(checkOptimizerStepValue(op("adam-step"), 1)).toBe(1);
    expect(checkOptimizerStepValue(op("adam-step"), 1e6)).toBe(1e6);
    for (const t of [0, -2, 1.5, NaN, Infinity]) {
      const e = thrown(() => checkOptimizerStepValue(op("sgd-momentum"), t));
      expect([e.code, e.subject, e.got], String(t)).toEqual(["input", "n.step", String(t)]);
    }
    expect(thrown(() => checkOptimizerStepValue(op("adam-step"), 0)).message).toBe(
      "n.step: invalid step count of op adam-step, expected an integer >= 1 (1 for the first step), got 0",
    );
  });
});

describe("kernel checks of clipping, accumulation and the learning-rate factor", () => {
  it("clip-by-norm and grad-accumulate attributes: defaults filled in, bad ones named", () => {
    expect(checkClipByNormAttrs(op("clip-by-norm", { maxNorm: 1 }))).toEqual({ maxNorm: 1, eps: 1e-6 });
    expect(checkGradAccumulateAttrs(op("grad-accumulate", { scale: 0.25 }))).toEqual({ scale: 0.25 });
    for (const [f, field] of [
      [() => checkClipByNormAttrs(op("clip-by-norm", {})), "maxNorm"],
      [() => checkClipByNormAttrs(op("clip-by-norm", { maxNorm: 0 })), "maxNorm"],
      [() => checkClipByNormAttrs(op("clip-by-norm", { maxNorm: 1, eps: -1 })), "eps"],
      [() => checkGradAccumulateAttrs(op("grad-accumulate", { scale: Infinity })), "scale"],
    ] as const) {
      expect(codeOf(f), field).toEqual(["attr", `n.${field}`]);
    }
  });

  it("a one-element input is [] or [1]; lrScale a finite number >= 0", () => {
    expect(() => expectScalarShape(op("sum-squares"), "acc", shaped())).not.toThrow();
    expect(() => expectScalarShape(op("sum-squares"), "acc", shaped(1))).not.toThrow();
    expect(thrown(() => expectScalarShape(op("clip-by-norm"), "sumSquares", shaped(2))).message).toBe(
      "n.sumSquares: op clip-by-norm takes sumSquares as one number, expected [] or [1], got [2]",
    );
    expect(checkLrScaleValue(op("adam-step"), 0)).toBe(0);
    expect(checkLrScaleValue(op("adam-step"), 0.5)).toBe(0.5);
    for (const s of [-1, NaN, Infinity])
      expect(
        codeOf(() => checkLrScaleValue(op("adam-step"), s)),
        String(s),
      ).toEqual(["input", "n.lrScale"]);
  });
});
