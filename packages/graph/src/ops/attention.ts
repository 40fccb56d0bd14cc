import { defineOp } from "../op-def.js";
import { checkMods, MOD_ATTRS, type AttentionMods } from "./attention-mods.js";
import { GATHERED_SLOTS } from "./gathered.js";
import { expectDim, expectHeadGroups } from "./shape-checks.js";
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
    { name: "q", rank: 4, heads: 1, doc: "[B, H, L, D]" },
    { name: "k", rank: 4, heads: 1, doc: "[B, Hkv, S, D]" },
    { name: "v", rank: 4, heads: 1, doc: "[B, Hkv, S, D]" },
    { name: "keyPaddingMask", optional: true, rank: 2, doc: "[B, S], 1 = padded key" },
    ...GATHERED_SLOTS,
  ],
  outputHeads: 1,
  attrs: {
    causal: { type: "boolean", default: false },
    window: { type: "integer", nullable: true, min: 1 },
    alignment: { type: "string", default: "top-left", oneOf: ["top-left", "bottom-right"] },
    scale: { type: "number", default: 1 },
    dropoutRate: { type: "number", default: 0, min: 0, max: 1 },
    dropoutSeed: { type: "integer", default: 0, min: 0, max: 0xffffffff, dropoutSeed: true },
    training: { type: "boolean", default: false },
    ...MOD_ATTRS,
  },
  checkAttrs: (a, ctx) => {
    if (a.window !== null && !a.causal)
      ctx.fail("window", "a sliding window needs causal", "causal: true", "causal: false");
    if (a.dropoutRate >= 1)
      ctx.fail("dropoutRate", "dropout rate must be below 1", "0 <= rate < 1", String(a.dropoutRate));
  },
  inferShape: ([q, k, v, pad, ...gathered], attrs, ctx) => {
    checkMods(ctx, attrs, gathered);
    const [b, h, l, d] = q!;
    expectDim(ctx, "k", "batch of keys must match queries", b!, k![0]!, k);
    expectHeadGroups(ctx, "k", h!, k![1]!);
    expectDim(ctx, "k", "head dim of keys must match queries", d!, k![3]!, k);
    expectDim(ctx, "v", "batch of values must match queries", b!, v![0]!, v);
    expectDim(ctx, "v", "values must have as many heads as keys", k![1]!, v![1]!, v);
    expectDim(ctx, "v", "value length must equal the key length S", k![2]!, v![2]!, v);
    if (pad) {
      expectDim(ctx, "keyPaddingMask", "batch of the padding mask must match", b!, pad[0]!, pad);
      expectDim(ctx, "keyPaddingMask", "padding mask length must equal the key length S", k![2]!, pad[1]!, pad);
    }
    return [b!, h!, l!, v![3]!];
  },
  // Unfused backward: recomputes scores and weights from q and k, then the rules of the chain's parts.
  vjp: (ctx) => attention(ctx),
});
