// What the attention ops (score, weighted-sum, mask, alibi, attention, attention-lse, attention-grad) declare alike:
// their per-head inputs, the key padding mask, the mask's geometry and the dropout attributes with their checks, and
// the shape rule of q, k, v and the padding mask. One definition, so the fused ops and the chain they stand for can
// never disagree about what they accept or how a mistake is reported.
import type { SymShape } from "../dims.js";
import type { AttrSpec, OpContext, OpInput } from "../op-def.js";
import type { MaskGeometry } from "./mask.js";
import { expectDim, expectHeadGroups } from "./shape-checks.js";

/** A [B, H, ·, ·] input whose axis 1 indexes attention heads (see OpInput.heads). */
export function perHeadInput(name: string, doc: string): OpInput {
  return { name, rank: 4, heads: 1, doc };
}

export const KEY_PADDING_INPUT: OpInput = {
  name: "keyPaddingMask",
  optional: true,
  rank: 2,
  doc: "[B, S], 1 = padded key",
};

/** A multiplier of the scores (1/sqrt(D) in standard attention), or a backward op's copy of its forward's. */
export const SCALE_ATTR: AttrSpec = { type: "number", default: 1 };

export const ALIGNMENT_ATTR: AttrSpec = { type: "string", default: "top-left", oneOf: ["top-left", "bottom-right"] };

/** The mask's geometry and the score scale, as the fused attention ops (attention, -lse, -grad) declare them. */
export const MASK_ATTRS = {
  causal: { type: "boolean", default: false },
  window: { type: "integer", nullable: true, min: 1 },
  alignment: ALIGNMENT_ATTR,
  scale: SCALE_ATTR,
} as const;

/** Dropout on the weights, as the fused attention and its backward declare it (the dropout op's, renamed). */
export const DROPOUT_ATTRS = {
  dropoutRate: { type: "number", default: 0, min: 0, max: 1 },
  dropoutSeed: { type: "integer", default: 0, min: 0, max: 0xffffffff, dropoutSeed: true },
  training: { type: "boolean", default: false },
} as const;

/** A sliding window is a causal mask's. */
export function checkWindow(a: MaskGeometry, ctx: OpContext): void {
  if (a.window !== null && !a.causal)
    ctx.fail("window", "a sliding window needs causal", "causal: true", "causal: false");
}

/** A dropout rate's spec allows 1; the 1/(1 − rate) scale of the kept elements does not. */
export function expectDropoutRate(ctx: OpContext, field: string, rate: number): void {
  if (rate >= 1) ctx.fail(field, "dropout rate must be below 1", "0 <= rate < 1", String(rate));
}

/** The attribute check of the fused attention and its backward: the window, then the dropout rate. */
export function checkAttentionAttrs(a: MaskGeometry & { readonly dropoutRate: number }, ctx: OpContext): void {
  checkWindow(a, ctx);
  expectDropoutRate(ctx, "dropoutRate", a.dropoutRate);
}

/** q [B, H, L, D] against k [B, Hkv, S, D] (and v [B, Hkv, S, Dv], the padding mask [B, S]) as the attention op checks. */
export function expectAttentionShapes(
  ctx: OpContext,
  q: SymShape,
  k: SymShape,
  v: SymShape | undefined,
  pad: SymShape | undefined,
): void {
  const [b, h, , d] = q;
  expectDim(ctx, "k", "batch of keys must match queries", b!, k[0]!, k);
  expectHeadGroups(ctx, "k", h!, k[1]!);
  expectDim(ctx, "k", "head dim of keys must match queries", d!, k[3]!, k);
  if (v) {
    expectDim(ctx, "v", "batch of values must match queries", b!, v[0]!, v);
    expectDim(ctx, "v", "values must have as many heads as keys", k[1]!, v[1]!, v);
    expectDim(ctx, "v", "value length must equal the key length S", k[2]!, v[2]!, v);
  }
  if (pad) {
    expectDim(ctx, "keyPaddingMask", "batch of the padding mask must match", b!, pad[0]!, pad);
    expectDim(ctx, "keyPaddingMask", "padding mask length must equal the key length S", k[2]!, pad[1]!, pad);
  }
}
