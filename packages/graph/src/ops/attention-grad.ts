// The fused attention backward, FlashAttention style: what the scheduler's backward fusion puts in place of the rules
// grad() composes for score → mask → softmax → dropout → weighted-sum when nobody watches the [L, S] values. The
// forward's weights are never kept: `attention-lse` saves one number per query row (the log of the softmax's
// denominator, max included), and each `attention-grad` recomputes a weight as exp(scale · q·k − lse) where it needs it.
import { defineOp, type OpInput } from "../op-def.js";
import type { AttentionAttrs } from "./attention.js";
import { checkMods, MOD_ATTRS, type AttentionMods } from "./attention-mods.js";
import {
  checkAttentionAttrs,
  checkWindow,
  DROPOUT_ATTRS,
  expectAttentionShapes,
  KEY_PADDING_INPUT,
  MASK_ATTRS,
} from "./attention-parts.js";
import { GATHERED_SLOTS, MAX_GATHERED } from "./gathered.js";
import type { MaskGeometry } from "./mask.js";
import { expectDim } from "./shape-checks.js";

export interface AttentionLseAttrs extends MaskGeometry, AttentionMods {
  /** As the forward softmax's: scores are multiplied by this first. */
  readonly scale: number;
}

/** The gradient targets: q, k, v, or a gathered input by slot (a learnable bias table, per-head temperatures). */
export type AttentionGradWrt = "q" | "k" | "v" | `g${number}`;

export const ATTENTION_GRAD_WRT: readonly AttentionGradWrt[] = [
  "q",
  "k",
  "v",
  ...Array.from({ length: MAX_GATHERED }, (_, i) => `g${i}` as const),
];

export interface AttentionGradAttrs extends AttentionAttrs {
  /** Which input's gradient this step computes. */
  readonly wrt: AttentionGradWrt;
}

/** The queries and keys both backward ops recompute the scores from. */
const QK_INPUTS: readonly OpInput[] = [
  { name: "q", rank: 4, doc: "[B, H, L, D]" },
  { name: "k", rank: 4, doc: "[B, Hkv, S, D]" },
];

/**
 * lse[b, h, i] = log Σ_j exp(scale · q_i·k_j) over the keys query i sees (the mask's rule: causal, window, key padding),
 * computed stably (max first). A row that sees no key gets −∞. q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L].
 * With modifications: log Σ exp(s'_ij) over the kept keys (attention-mods.ts).
 */
export const attentionLseOp = defineOp<AttentionLseAttrs>({
  kind: "attention-lse",
  doc: "Per query row, log Σ exp(scale · q·k) over its visible keys (−∞ when none): what the fused attention backward keeps of the forward.",
  inputs: [...QK_INPUTS, KEY_PADDING_INPUT, ...GATHERED_SLOTS],
  attrs: { ...MASK_ATTRS, ...MOD_ATTRS },
  hidesWithMinusInfinity: true,
  checkAttrs: checkWindow,
  inferShape: ([q, k, pad, ...gathered], attrs, ctx) => {
    checkMods(ctx, attrs, gathered);
    expectAttentionShapes(ctx, q!, k!, undefined, pad);
    return [q![0]!, q![1]!, q![2]!];
  },
});

/**
 * One input's gradient of `out = attention(q, k, v, keyPaddingMask)` from `grad` (the gradient of out), `out` itself and
 * `lse` (attention-lse of the same q, k and mask). Per query row i with δ_i = Σ_d grad_i·out_i and, for each key j it
 * sees, p_ij = exp(scale · q_i·k_j − lse_i), m_ij = dropout's keep factor (0 or 1/(1 − rate); 1 without dropout):
 *   dS_ij = scale · p_ij · (m_ij · grad_i·v_j − δ_i)
 *   wrt q: dq_i = Σ_j dS_ij k_j                                 → [B, H, L, D]
 *   wrt k: dk_j = Σ over the query heads sharing j's head, Σ_i dS_ij q_i → [B, Hkv, S, D]
 *   wrt v: dv_j = Σ over those heads, Σ_i m_ij p_ij grad_i    → [B, Hkv, S, Dv]
 * A row that sees no key (lse −∞) contributes nothing: its dq is 0, never NaN. The same dropout elements are dropped as
 * in the forward (element index ((b · H + h) · L + i) · S + j).
 * With modifications (attention-mods.ts) p_ij = exp(s'_ij − lse_i) over the kept keys, and the score's gradient
 * dS'_ij = p_ij · (m_ij · grad_i·v_j − δ_i) reaches q and k as dS'_ij · scale · ∂scoreMod/∂score; wrt a gathered slot
 * gN: Σ_ij dS'_ij · ∂scoreMod/∂read at every index the score modification read gN (zeros where only the mask reads it).
 */
export const attentionGradOp = defineOp<AttentionGradAttrs>({
  kind: "attention-grad",
  doc: "Fused attention backward for one of q, k, v: weights recomputed per block from the saved lse, [L, S] never kept.",
  inputs: [
    ...QK_INPUTS,
    { name: "v", rank: 4, doc: "[B, Hkv, S, Dv]" },
    { name: "out", rank: 4, doc: "[B, H, L, Dv], the forward's output" },
    { name: "grad", rank: 4, doc: "[B, H, L, Dv], the gradient of out" },
    { name: "lse", rank: 3, doc: "[B, H, L], attention-lse of q and k" },
    KEY_PADDING_INPUT,
    ...GATHERED_SLOTS,
  ],
  attrs: {
    ...MASK_ATTRS,
    ...MOD_ATTRS,
    ...DROPOUT_ATTRS,
    wrt: { type: "string", oneOf: ATTENTION_GRAD_WRT },
  },
  checkAttrs: checkAttentionAttrs,
  inferShape: ([q, k, v, out, g, lse, pad, ...gathered], attrs, ctx) => {
    checkMods(ctx, attrs, gathered);
    expectAttentionShapes(ctx, q!, k!, v!, pad);
    const outShape = [q![0]!, q![1]!, q![2]!, v![3]!];
    for (const [name, s] of [
      ["out", out!],
      ["grad", g!],
    ] as const) {
      outShape.forEach((d, i) => expectDim(ctx, name, `${name} must be [B, H, L, Dv] of q and v`, d, s[i]!, s));
    }
    outShape.slice(0, 3).forEach((d, i) => expectDim(ctx, "lse", "lse must be [B, H, L] of q", d, lse![i]!, lse!));
    if (attrs.wrt === "q" || attrs.wrt === "k" || attrs.wrt === "v")
      return attrs.wrt === "q" ? q! : attrs.wrt === "k" ? k! : v!;
    const slot = Number(attrs.wrt.slice(1));
    if (slot >= (attrs.inputs ?? []).length)
      ctx.fail("wrt", "no gathered input in that slot", `one of g0 … g${(attrs.inputs ?? []).length - 1}`, attrs.wrt);
    return gathered[slot]!;
  },
});
