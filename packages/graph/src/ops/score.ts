import { defineOp } from "../op-def.js";
import { expectDim, expectHeadGroups } from "./shape-checks.js";
import { gradOf, sumHeadGroups, swapLast } from "../vjp-helpers.js";

export interface ScoreAttrs {}

/**
 * Raw attention scores Q·Kᵀ per batch and head, before scale and mask. q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S].
 * Key head h / (H / Hkv) serves query head h (grouped-query attention), indexed, never materialised.
 */
export const scoreOp = defineOp<ScoreAttrs>({
  kind: "score",
  doc: "Q·Kᵀ per batch and head (before scale and mask); key heads are shared by H/Hkv consecutive query heads.",
  inputs: [
    { name: "q", rank: 4, heads: 1, doc: "[B, H, L, D]" },
    { name: "k", rank: 4, heads: 1, doc: "[B, Hkv, S, D]" },
  ],
  attrs: {},
  outputHeads: 1,
  inferShape: ([q, k], _attrs, ctx) => {
    const [b, h, l, d] = q!;
    expectDim(ctx, "k", "batch of keys must match queries", b!, k![0]!, k);
    expectHeadGroups(ctx, "k", h!, k![1]!);
    expectDim(ctx, "k", "head dim of keys must match queries", d!, k![3]!, k);
    return [b!, h!, l!, k![2]!];
  },
  // scores = q · kᵀ: dq = g · k (a weighted sum over keys), dk = gᵀ · q summed over each key head's query heads.
  vjp: (ctx) => {
    const g = gradOf(ctx, "score");
    const [q, k] = ctx.inputs as [string, string];
    const dq = ctx.needs(0) ? ctx.addGrad(0, "weighted-sum", { weights: g, v: k }) : undefined;
    const dk = ctx.needs(1)
      ? sumHeadGroups(ctx, 1, "weighted-sum", { weights: swapLast(ctx, g, "grad.t"), v: q }, ctx.shapeOf(k), "k")
      : undefined;
    return [dq, dk];
  },
});
