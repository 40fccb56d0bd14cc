import { formatDims, sameDim, type SymShape } from "../dims.js";
import { defineOp, type OpContext } from "../op-def.js";
import { ALIGNMENT_ATTR, checkWindow, KEY_PADDING_INPUT } from "./attention-parts.js";
import { expectDim } from "./shape-checks.js";
import { gradOf } from "../vjp-helpers.js";

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
  /**
   * Visible scores are multiplied by this before `bias` is added (default 1). A graph with an additive bias applies the
   * score scale here and gives its softmax scale 1, because the bias must not be scaled (as ALiBi does): PyTorch SDPA
   * computes softmax(q·kᵀ·scale + attn_mask).
   */
  readonly scale: number;
}

/** The positional part of the mask attributes, which the fused attention op shares (its `scale` means another thing). */
export type MaskGeometry = Pick<MaskAttrs, "causal" | "window" | "alignment">;

/**
 * Masked scores become −∞: causal, sliding window, key padding and a user mask compose by "or" (a key is hidden if any
 * mask hides it); visible scores become `scale · score + bias`. scores [B, H, L, S]; keyPaddingMask [B, S] of 0/1
 * (1 = padded key); mask of 0/1 where 0 hides the key (PyTorch `masked_fill(mask == 0, -inf)`), [L, S], [B, L, S] or
 * [B, H, L, S]; bias, additive float (PyTorch SDPA's float `attn_mask`: −∞ hides), same shapes. In mask and bias a dim
 * may be 1 and then holds for every index of that axis. Note that a rank-3 mask is per batch ([B, L, S]), as the
 * worked example's is, not per head. → [B, H, L, S].
 */
export const maskOp = defineOp<MaskAttrs>({
  kind: "mask",
  doc: "Masked scores become -inf: causal (with an alignment), sliding window, key padding, a user 0/1 mask; masks compose by or; plus an additive bias.",
  inputs: [
    { name: "scores", rank: 4, doc: "[B, H, L, S]" },
    KEY_PADDING_INPUT,
    {
      name: "mask",
      optional: true,
      doc: "[L, S], [B, L, S] or [B, H, L, S] of 0/1, 0 = hidden key (dims of 1 broadcast)",
    },
    {
      name: "bias",
      optional: true,
      doc: "[L, S], [B, L, S] or [B, H, L, S], added to the (scaled) scores; -inf hides",
    },
  ],
  attrs: {
    causal: { type: "boolean", default: false },
    window: { type: "integer", nullable: true, min: 1, doc: "needs causal" },
    alignment: ALIGNMENT_ATTR,
    scale: { type: "number", default: 1, doc: "visible scores are multiplied by this before the bias is added" },
  },
  checkAttrs: checkWindow,
  inPlace: 0,
  hidesWithMinusInfinity: true,
  inferShape: ([scores, pad, mask, bias], _attrs, ctx) => {
    if (pad) {
      expectDim(ctx, "keyPaddingMask", "batch of the padding mask must match the scores", scores![0]!, pad[0]!, pad);
      expectDim(ctx, "keyPaddingMask", "padding mask length must equal the key length S", scores![3]!, pad[1]!, pad);
    }
    if (mask) checkUserMaskShape(ctx, "mask", scores!, mask);
    if (bias) checkUserMaskShape(ctx, "bias", scores!, bias);
    return scores!;
  },
  // Visible scores get scale · g, hidden ones (−∞ in the output, whichever mask hid them) 0. An additive bias gets g
  // where visible, summed over the axes it was broadcast along; the 0/1 masks have no gradient.
  vjp: (ctx) => {
    const g = gradOf(ctx, "mask");
    const bias = ctx.inputs[3];
    const scores = ctx.needs(0)
      ? ctx.addGrad(0, "mask-grad", { grad: g, masked: ctx.output }, { scale: ctx.attrs.scale })
      : undefined;
    let dbias: string | undefined;
    if (bias !== undefined && ctx.needs(3)) {
      const visible = ctx.add("mask-grad", "bias.visible", { grad: g, masked: ctx.output }, { scale: 1 });
      const m = ctx.shapeOf(bias);
      // A rank-3 bias is [B, L, S]: per batch, not per head, so it is summed as [B, 1, L, S].
      const summed =
        m.length === 3 ? ctx.add("sum-to", "bias.sum", { x: visible }, { shape: [m[0]!, 1, m[1]!, m[2]!] }) : undefined;
      dbias = summed
        ? ctx.addGrad(3, "reshape", { x: summed }, { shape: [...m] })
        : ctx.addGrad(3, "sum-to", { x: visible }, { shape: [...m] });
    }
    return [scores, undefined, undefined, dbias];
  },
});

/** The scores axes a user mask of rank 2, 3 or 4 stands for: [L, S], [B, L, S], [B, H, L, S]. */
export const USER_MASK_AXES: Readonly<Record<number, readonly number[]>> = { 2: [2, 3], 3: [0, 2, 3], 4: [0, 1, 2, 3] };

function checkUserMaskShape(ctx: OpContext, field: string, scores: SymShape, m: SymShape): void {
  const axes = USER_MASK_AXES[m.length];
  if (!axes)
    ctx.fail(
      field,
      `a user ${field} is [L, S], [B, L, S] or [B, H, L, S]`,
      "rank 2, 3 or 4",
      `${formatDims(m)} (rank ${m.length})`,
    );
  const legend = ["B", "H", "L", "S"];
  axes.forEach((axis, i) => {
    const d = m[i]!;
    if (d !== 1 && !sameDim(scores[axis]!, d)) {
      ctx.fail(
        field,
        `${field} dim ${legend[axis]} must match the scores or be 1`,
        `${scores[axis]} or 1`,
        `${d} in ${formatDims(m)}`,
      );
    }
  });
}
