import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { checkDropoutAttrs, checkMaskAttrs, checkScale, expectHeadGroups, expectRank, maskOffset, windowOf } from "./kernel-checks.js";

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
    expect(thrown(() => checkScale(call({ scale: NaN }))).message).toBe("n.scale: invalid attribute of op mask, expected a finite number, got NaN");
    expect(thrown(() => checkDropoutAttrs(call({ rate: 1, seed: 0, training: true }))).subject).toBe("n.rate");
    expect(thrown(() => expectRank(call({}), "scores", { shape: [2, 3] }, 4, "[B, H, L, S]")).message).toBe(
      "n.scores: op mask needs rank 4, expected [B, H, L, S], got [2, 3]",
    );
    expect(() => expectHeadGroups(call({}), "k", 4, 3, { shape: [1, 3, 2, 2] })).toThrow(/query heads H must be a multiple/);
  });

  it("accept good attributes, with defaults for the fused attention's optional dropout", () => {
    expect(checkMaskAttrs(call({ causal: true, alignment: "bottom-right" }))).toEqual({ causal: true, window: null, alignment: "bottom-right" });
    expect(checkDropoutAttrs(call({}), { rate: "dropoutRate", seed: "dropoutSeed", training: "training" }, { rate: 0, seed: 0, training: false })).toEqual({ rate: 0, seed: 0, training: false });
    expect(maskOffset("bottom-right", 3, 5)).toBe(2);
    expect(maskOffset("top-left", 3, 5)).toBe(0);
    expect(windowOf({ causal: true, window: 3 })).toBe(3);
    expect(windowOf({ causal: false, window: null })).toBe(0);
  });
});
