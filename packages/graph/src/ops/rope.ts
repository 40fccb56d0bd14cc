import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface RopeAttrs {
  /** θ_i = p · base^(−2i/r); 10000 in the RoFormer paper and most models. */
  readonly base: number;
  /** r, the number of leading dims rotated (even, ≤ D); null = all of D. Dims r..D−1 pass through unchanged. */
  readonly rotaryDim: number | null;
  /**
   * Position of query/key 0 (tokens already in a cache); position p = positionOffset + l. A dim name (a decode graph's
   * past length `P`) is bound per run; kernels get the integer.
   */
  readonly positionOffset: number | string;
  /** Rotate by −θ instead of θ: the inverse rotation, which is RoPE's backward (a rotation's transpose). */
  readonly inverse: boolean;
}

/**
 * Rotary position embedding, split-half convention (GPT-NeoX, Llama, Hugging Face `rotate_half`), not the interleaved
 * GPT-J one: dim i is paired with dim i + r/2, not with dim i + 1. For position p = positionOffset + l and
 * i in [0, r/2), θ = p · base^(−2i/r), x1 = x[..., i], x2 = x[..., i + r/2]:
 * out[..., i] = x1·cos θ − x2·sin θ, out[..., i + r/2] = x2·cos θ + x1·sin θ. Applied to queries and keys after the
 * heads are split, so ⟨rope(q, m), rope(k, n)⟩ depends on m − n only. With `inverse`, θ becomes −θ (sin flips sign):
 * the transpose of the rotation, which is its gradient. x [B, H, L, D] → [B, H, L, D].
 */
export const ropeOp = defineOp<RopeAttrs>({
  kind: "rope",
  doc: "Rotary position embedding on [B, H, L, D], split-half pairs (i, i + r/2) as in GPT-NeoX/Llama, not GPT-J's interleaved.",
  inputs: [{ name: "x", rank: 4, heads: 1, doc: "[B, H, L, D], heads split" }],
  attrs: {
    base: { type: "number", default: 10000, doc: "> 0" },
    rotaryDim: { type: "integer", nullable: true, min: 2, doc: "even, <= D; null = D" },
    positionOffset: {
      type: "dim",
      default: 0,
      min: 0,
      doc: "an integer >= 0, or a dim name bound per run (a decode graph's past length)",
    },
    inverse: { type: "boolean", default: false, doc: "rotate by −θ (the backward of RoPE)" },
  },
  checkAttrs: (a, ctx) => {
    if (!(a.base > 0)) ctx.fail("base", "the RoPE base must be positive", "> 0", String(a.base));
    if (a.rotaryDim !== null && a.rotaryDim % 2 !== 0)
      ctx.fail("rotaryDim", "rotated dims come in pairs", "an even number", String(a.rotaryDim));
  },
  outputHeads: 1,
  inferShape: ([x], { rotaryDim }, ctx) => {
    const d = x![3]!;
    // A symbolic D passes here; the runtime re-runs this rule on concrete shapes, and the kernels check too.
    if (typeof d === "number") {
      if (rotaryDim === null && d % 2 !== 0)
        ctx.fail("x", "RoPE over the whole head dim needs an even D", "an even D", `D=${d}`);
      if (rotaryDim !== null && rotaryDim > d)
        ctx.fail("rotaryDim", "rotaryDim must not exceed the head dim D", `<= ${d}`, String(rotaryDim));
    }
    return x!;
  },
  // A rotation's gradient is the inverse rotation.
  vjp: (ctx) => [ctx.addGrad(0, "rope", { x: gradOf(ctx, "rope") }, { ...ctx.attrs, inverse: !ctx.attrs.inverse })],
});
