import { defineOp } from "../op-def.js";

export interface SoftmaxAttrs {
  /** Scores are multiplied by this before the softmax (1/sqrt(D) in standard attention). */
  readonly scale: number;
}

/**
 * softmax(scale · x) over the last axis, numerically stable (the row max is subtracted). A row whose entries are all
 * −∞ (every key masked) gives zeros, never NaN. x [B, H, L, S] → same.
 */
export const softmaxOp = defineOp<SoftmaxAttrs>({
  kind: "softmax",
  doc: "softmax(scale · x) over the last axis, stable; a fully masked row gives zeros.",
  inputs: [{ name: "x", doc: "[..., S]" }],
  attrs: { scale: { type: "number", default: 1 } },
  inPlace: 0,
  inferShape: ([x], _attrs, ctx) => {
    if (x!.length < 1) ctx.fail("x", "softmax needs at least one axis", "rank >= 1", "a scalar");
    return x!;
  },
});
