import { defineOp } from "../op-def.js";
import { SCALE_ATTR } from "./attention-parts.js";
import { expectAxis, expectSameShape } from "./shape-checks.js";

export interface SoftmaxGradAttrs {
  /** The forward softmax's scale. */
  readonly scale: number;
}

/**
 * The input gradient of `y = softmax(scale · x)` over the last axis, from y itself (nothing recomputed):
 * dx = scale · y ⊙ (grad − Σ_row grad ⊙ y). A fully masked row (y all 0) gets 0. y [..., S], grad [..., S] → same.
 */
export const softmaxGradOp = defineOp<SoftmaxGradAttrs>({
  kind: "softmax-grad",
  doc: "Softmax backward from its output: scale · y ⊙ (grad − Σ grad ⊙ y) per row; a fully masked row gets 0.",
  inputs: [
    { name: "y", doc: "[..., S], the softmax's output" },
    { name: "grad", doc: "[..., S], the gradient of y" },
  ],
  attrs: { scale: SCALE_ATTR },
  inferShape: ([y, g], _attrs, ctx) => {
    expectAxis(ctx, "y", "softmax-grad", y!);
    expectSameShape(ctx, "grad", y!, g!);
    return y!;
  },
});
