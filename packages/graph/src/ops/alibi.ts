import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";
import { ALIGNMENT_ATTR, perHeadInput } from "./attention-parts.js";

export interface AlibiAttrs {
  /**
   * One slope m_h per head H. null = the standard slopes of the ALiBi paper for H heads (its `get_slopes`): for H a
   * power of two, m_h = 2^(−8(h+1)/H); otherwise, with n the largest power of two below H, the first n heads get
   * 2^(−8(h+1)/n) and the other H − n heads every other slope of the 2n sequence from its first, 2^(−4(2k+1)/n).
   */
  readonly slopes: readonly number[] | null;
  /** The score scale (1/sqrt(D) in standard attention), applied here because the bias must not be scaled. */
  readonly scale: number;
  /**
   * Query position when L != S, as in mask: "top-left" puts query i at key position i, "bottom-right" at i + S − L
   * (the last query is the last key, as in decoding with a cache).
   */
  readonly alignment: "top-left" | "bottom-right";
}

/**
 * ALiBi (Press et al., "Train Short, Test Long"): scale · scores + m_h · (j − i_pos), with i_pos the query's key
 * position after alignment. The scale is applied here, not by the softmax, because ALiBi's bias is added after the
 * scaling, softmax(q·kᵀ/√D + m·(j − i)): a softmax scale would shrink the slopes by √D too. A graph using it gives its
 * softmax scale 1. An entry of −∞ (a masked score) stays −∞. scores [B, H, L, S] → [B, H, L, S].
 */
export const alibiOp = defineOp<AlibiAttrs>({
  kind: "alibi",
  doc: "ALiBi: scale · scores + slope_h · (j − i), the bias added after scaling (softmax scale 1); −inf stays −inf.",
  inputs: [perHeadInput("scores", "[B, H, L, S]")],
  attrs: {
    slopes: { type: "numbers", nullable: true, doc: "one per head H; null = the paper's slopes for H heads" },
    scale: { type: "number", default: 1, doc: "the score scale, e.g. 1/sqrt(D)" },
    alignment: ALIGNMENT_ATTR,
  },
  hidesWithMinusInfinity: true,
  outputHeads: 1,
  inferShape: ([scores], { slopes }, ctx) => {
    const h = scores![1]!;
    // A symbolic H passes here; the runtime re-runs this rule on concrete shapes, and the kernels check too.
    if (slopes !== null && typeof h === "number" && slopes.length !== h) {
      ctx.fail("slopes", "ALiBi needs one slope per head H", `${h} slopes`, `${slopes.length}`);
    }
    return scores!;
  },
  // The bias is constant: the gradient is scale · g where the output is finite (a −∞ input stays −∞ and gets 0).
  vjp: (ctx) => [
    ctx.addGrad(0, "mask-grad", { grad: gradOf(ctx, "alibi"), masked: ctx.output }, { scale: ctx.attrs.scale }),
  ],
});

/**
 * The ALiBi paper's slopes for H heads, in closed form: with n the largest power of two <= H, head h < n gets
 * 2^(−8(h+1)/n) and head n + k gets 2^(−4(2k+1)/n) (every other slope of the 2n sequence, from its first).
 */
export function alibiSlopes(h: number): number[] {
  const n = 2 ** Math.floor(Math.log2(h));
  return Array.from({ length: h }, (_, i) => (i < n ? 2 ** ((-8 * (i + 1)) / n) : 2 ** ((-4 * (2 * (i - n) + 1)) / n)));
}
