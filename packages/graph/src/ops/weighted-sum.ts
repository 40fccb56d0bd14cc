import { defineOp } from "../op-def.js";
import { perHeadInput } from "./attention-parts.js";
import { expectDim, expectHeadGroups } from "./shape-checks.js";
import { gradOf, groupedOperandGrad } from "../vjp-helpers.js";

export interface WeightedSumAttrs {}

/** weights · V per batch and head. weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]; value heads shared like keys. */
export const weightedSumOp = defineOp<WeightedSumAttrs>({
  kind: "weighted-sum",
  doc: "weights · V per batch and head; value heads are shared by H/Hkv consecutive query heads.",
  inputs: [perHeadInput("weights", "[B, H, L, S]"), perHeadInput("v", "[B, Hkv, S, D]")],
  attrs: {},
  outputHeads: 1,
  inferShape: ([w, v], _attrs, ctx) => {
    const [b, h, l, s] = w!;
    expectDim(ctx, "v", "batch of values must match the weights", b!, v![0]!, v);
    expectHeadGroups(ctx, "v", h!, v![1]!);
    expectDim(ctx, "v", "value length must equal the key length S", s!, v![2]!, v);
    return [b!, h!, l!, v![3]!];
  },
  // context = weights · v: dweights = g · vᵀ (a score), dv = weightsᵀ · g summed over each value head's query heads.
  vjp: (ctx) => {
    const g = gradOf(ctx, "weighted-sum");
    const [w, v] = ctx.inputs as [string, string];
    const dw = ctx.needs(0) ? ctx.addGrad(0, "score", { q: g, k: v }) : undefined;
    return [dw, groupedOperandGrad(ctx, w, "weights.t", g, "v")];
  },
});
