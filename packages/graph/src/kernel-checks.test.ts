// The kernel checks left to kernels: what only a kernel can know (values read from data: the step, lrScale) and the
// helpers that compute as they check (sum-to's target, the mask geometry). The rules an op's declaration states are
// tested through checkCall (check-call-ops.test.ts).
import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { expectHeadGroups, expectRank, maskOffset, windowOf } from "./kernel-checks.js";
import { checkSumToShape, expectSameShape } from "./kernel-checks-backward.js";
import { checkLrScaleValue, checkOptimizerStepValue } from "./kernel-checks-optim.js";

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
    expect(thrown(() => expectRank(call({}), "scores", { shape: [2, 3] }, 4, "[B, H, L, S]")).message).toBe(
      "n.scores: op mask needs rank 4, expected [B, H, L, S], got [2, 3]",
    );
    expect(() => expectHeadGroups(call({}), "k", 4, 3, { shape: [1, 3, 2, 2] })).toThrow(
      /query heads H must be a multiple/,
    );
  });

  it("the mask geometry: the alignment's offset and the window", () => {
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
});

describe("values read from tensors", () => {
  it("the step: an integer >= 1", () => {
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

  it("lrScale, read from a tensor: a finite number >= 0", () => {
    expect(checkLrScaleValue(op("adam-step"), 0)).toBe(0);
    expect(checkLrScaleValue(op("adam-step"), 0.5)).toBe(0.5);
    for (const s of [-1, NaN, Infinity])
      expect(
        codeOf(() => checkLrScaleValue(op("adam-step"), s)),
        String(s),
      ).toEqual(["input", "n.lrScale"]);
  });
});
