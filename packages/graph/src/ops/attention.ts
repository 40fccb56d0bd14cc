import { defineOp } from "../op-def.js";
import { checkMods, MOD_ATTRS, type AttentionMods } from "./attention-mods.js";
import {
  checkAttentionAttrs,
  DROPOUT_ATTRS,
  expectAttentionShapes,
  KEY_PADDING_INPUT,
  MASK_ATTRS,
  perHeadInput,
} from "./attention-parts.js";
import { GATHERED_SLOTS } from "./gathered.js";
import { attention } from "./vjp-fused.js";

export interface AttentionAttrs extends AttentionMods {
  /** As mask: query i sees keys j <= i (after alignment). */
  readonly causal: boolean;
  /** As mask: with causal, query i sees keys i - window < j <= i. */
  readonly window: number | null;
  readonly alignment: "top-left" | "bottom-right";
  /** As softmax: scores are multiplied by this before the softmax. */
  readonly scale: number;
  /** As dropout on the weights; 0 or training false = none. The mask index is the element's index in [B, H, L, S]. */
  readonly dropoutRate: number;
  readonly dropoutSeed: number;
  readonly training: boolean;
}

/**
 * score → mask → softmax → dropout → weighted-sum in one step: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, D],
 * keyPaddingMask [B, S] → context heads [B, H, L, D]. Same numbers as the chain of its parts (up to float rounding:
 * a kernel may stream over key blocks with a running max and sum). The scheduler's fusion pass puts it in place of
 * the chain when no tap or output needs the scores or weights; it may also be used in a graph directly.
 * With a score or mask modification (attention-mods.ts) it stands for score → score-mod → mask-mod → [mask] → softmax →
 * [dropout] → weighted-sum, reading the expressions' gathered inputs from slots g0 … g7.
 */
export const attentionOp = defineOp<AttentionAttrs>({
  kind: "attention",
  doc: "Fused score → mask → softmax → dropout → weighted-sum; the fusion pass uses it when nobody watches the middle.",
  inputs: [
    perHeadInput("q", "[B, H, L, D]"),
    perHeadInput("k", "[B, Hkv, S, D]"),
    perHeadInput("v", "[B, Hkv, S, D]"),
    KEY_PADDING_INPUT,
    ...GATHERED_SLOTS,
  ],
  outputHeads: 1,
  attrs: { ...MASK_ATTRS, ...DROPOUT_ATTRS, ...MOD_ATTRS },
  checkAttrs: checkAttentionAttrs,
  inferShape: ([q, k, v, pad, ...gathered], attrs, ctx) => {
    checkMods(ctx, attrs, gathered);
    expectAttentionShapes(ctx, q!, k!, v!, pad);
    return [q![0]!, q![1]!, q![2]!, v![3]!];
  },
  // Unfused backward: recomputes scores and weights from q and k, then the rules of the chain's parts.
  vjp: (ctx) => attention(ctx),
});
