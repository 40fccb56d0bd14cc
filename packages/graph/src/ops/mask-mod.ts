import type { Expr } from "../expr/types.js";
import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";
import { perHeadInput } from "./attention-parts.js";
import { exprModShape, GATHERED_NAMES_ATTR, GATHERED_SLOTS } from "./gathered.js";

export interface MaskModAttrs {
  /** FlexAttention's mask_mod as data: true where query q sees key kv, from b, h, q, kv and gathered inputs. */
  readonly expr: Expr;
  /** The gathered inputs' names, slot by slot (g0, g1, …). */
  readonly inputs: readonly string[];
}

/**
 * A mask modification: out[b, h, q, kv] = expr(b, h, q, kv) ? x[b, h, q, kv] : −∞. x [B, H, L, S] → [B, H, L, S].
 * Causal, windows, prefix-LM, document masks and a user's 0/1 mask are each one expression; the fused attention
 * evaluates the same expression per element and skips the key blocks it hides everywhere (see attention's maskMod).
 */
export const maskModOp = defineOp<MaskModAttrs>({
  kind: "mask-mod",
  doc: "out = expr(b, h, q, kv) ? x : -inf, a mask modification over [B, H, L, S] reading gathered inputs.",
  inputs: [perHeadInput("x", "[B, H, L, S], scores"), ...GATHERED_SLOTS],
  attrs: {
    expr: { type: "expr", doc: "the modification: true = the key is seen (golden-flex FORMAT.md)" },
    inputs: GATHERED_NAMES_ATTR,
  },
  outputHeads: 1,
  // Not in place: a gathered input may be x itself (or a view of it), read at other positions than the one written.
  hidesWithMinusInfinity: true,
  inferShape: exprModShape("mask"),
  // A seen score passes its gradient, a hidden one (−∞ in the output) none; the mask's inputs have none.
  vjp: (ctx) => [
    ctx.needs(0)
      ? ctx.addGrad(0, "mask-grad", { grad: gradOf(ctx, "mask-mod"), masked: ctx.output }, { scale: 1 })
      : undefined,
  ],
});
