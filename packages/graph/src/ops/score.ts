import { defineOp } from "../op-def.js";
import { expectAttentionShapes, perHeadInput } from "./attention-parts.js";
import { gradOf, groupedOperandGrad } from "../vjp-helpers.js";

export interface ScoreAttrs {}

/**
 * Raw attention scores Q·Kᵀ per batch and head, before scale and mask. q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S].
 * Key head h / (H / Hkv) serves query head h (grouped-query attention), indexed, never materialised.
 */
export const scoreOp = defineOp<ScoreAttrs>({
  kind: "score",
  doc: "Q·Kᵀ per batch and head (before scale and mask); key heads are shared by H/Hkv consecutive query heads.",
  inputs: [perHeadInput("q", "[B, H, L, D]"), perHeadInput("k", "[B, Hkv, S, D]")],
  attrs: {},
  outputHeads: 1,
  inferShape: ([q, k], _attrs, ctx) => {
    expectAttentionShapes(ctx, q!, k!, undefined, undefined);
    return [q![0]!, q![1]!, q![2]!, k![2]!];
  },
  // scores = q · kᵀ: dq = g · k (a weighted sum over keys), dk = gᵀ · q summed over each key head's query heads.
  vjp: (ctx) => {
    const g = gradOf(ctx, "score");
    const [q, k] = ctx.inputs as [string, string];
    const dq = ctx.needs(0) ? ctx.addGrad(0, "weighted-sum", { weights: g, v: k }) : undefined;
    return [dq, groupedOperandGrad(ctx, g, "grad.t", q, "k")];
  },
});
