import { defineOp } from "../op-def.js";
import { SCALE_ATTR } from "./attention-parts.js";
import { expectSameShape } from "./shape-checks.js";

export interface MaskGradAttrs {
  /** The forward op's scale of visible entries. */
  readonly scale: number;
}

/**
 * The input gradient of an op that scales visible entries and hides others as −∞ (mask; ALiBi, whose bias is constant):
 * scale · grad where the forward output is finite, 0 where it is −∞ (a hidden score gets no gradient). Read from the
 * forward output, so every mask (causal, window, padding, user, −∞ bias) is covered without repeating its rules.
 * grad [...], masked [...] → same.
 */
export const maskGradOp = defineOp<MaskGradAttrs>({
  kind: "mask-grad",
  doc: "scale · grad where the forward output is finite, 0 where it is −inf (backward of mask and ALiBi).",
  inputs: [
    { name: "grad", doc: "[...], the gradient of the forward output" },
    { name: "masked", doc: "[...], the forward output (−inf = hidden)" },
  ],
  attrs: { scale: SCALE_ATTR },
  inferShape: ([g, m], _attrs, ctx) => {
    expectSameShape(ctx, "masked", g!, m!);
    return g!;
  },
});
