import { defineOp } from "../op-def.js";
import { expectDim } from "./shape-checks.js";

export interface MaskAttrs {
  /** Query i sees keys j <= i (after alignment). */
  readonly causal: boolean;
  /** Sliding window: with causal, query i sees keys j with i - window < j <= i. null = no window. */
  readonly window: number | null;
  /**
   * How query positions line up with key positions when L != S: "top-left" (query i is key position i, PyTorch's
   * `is_causal`) or "bottom-right" (the last query is the last key, as in decoding with a cache).
   */
  readonly alignment: "top-left" | "bottom-right";
}

/**
 * Masked scores become −∞: causal, sliding window and key padding compose by "or" (a key is hidden if any mask hides it).
 * scores [B, H, L, S], keyPaddingMask [B, S] of 0/1 (1 = padded key, ignored) → [B, H, L, S].
 */
export const maskOp = defineOp<MaskAttrs>({
  kind: "mask",
  doc: "Masked scores become -inf: causal (with an alignment), sliding window, key padding; masks compose by or.",
  inputs: [
    { name: "scores", rank: 4, doc: "[B, H, L, S]" },
    { name: "keyPaddingMask", optional: true, rank: 2, doc: "[B, S], 1 = padded key" },
  ],
  attrs: {
    causal: { type: "boolean", default: false },
    window: { type: "integer", nullable: true, min: 1, doc: "needs causal" },
    alignment: { type: "string", default: "top-left", oneOf: ["top-left", "bottom-right"] },
  },
  checkAttrs: (a, ctx) => {
    if (a.window !== null && !a.causal) ctx.fail("window", "a sliding window needs causal", "causal: true", "causal: false");
  },
  inPlace: 0,
  inferShape: ([scores, pad], _attrs, ctx) => {
    if (pad) {
      expectDim(ctx, "keyPaddingMask", "batch of the padding mask must match the scores", scores![0]!, pad[0]!, pad);
      expectDim(ctx, "keyPaddingMask", "padding mask length must equal the key length S", scores![3]!, pad[1]!, pad);
    }
    return scores!;
  },
});
