import { defineOp } from "../op-def.js";
import { SCALE_ATTR } from "./attention-parts.js";
import { gradOf } from "../vjp-helpers.js";
import { expectAxis } from "./shape-checks.js";

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
  attrs: { scale: SCALE_ATTR },
  inPlace: 0,
  inferShape: ([x], _attrs, ctx) => {
    expectAxis(ctx, "x", "softmax", x!);
    return x!;
  },
  // From the output itself: scale · y ⊙ (g − Σ g ⊙ y); a fully masked row (y = 0) gets 0.
  vjp: (ctx) => [
    ctx.addGrad(0, "softmax-grad", { y: ctx.output, grad: gradOf(ctx, "softmax") }, { scale: ctx.attrs.scale }),
  ],
});
