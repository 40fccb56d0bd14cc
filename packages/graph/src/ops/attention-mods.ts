// The modifications the fused attention ops (attention, attention-lse, attention-grad) evaluate inside their streaming
// loops: a score modification and a mask modification as expressions (golden-flex FORMAT.md), reading gathered inputs
// in slots after the op's own inputs. One definition of the attributes and their check, shared by the three ops, so
// the forward, the lse and the backward can never disagree about what a variant is.
//
// Per element [b, h, i, j] (i the query's row index, j the key's; no alignment offset, as score-mod and mask-mod see
// them), with raw = q_i · k_j:
//   s    = scale · raw                       (rounded to float32 when there is a score modification: its `score`)
//   s'   = scoreMod(s, b, h, i, j)           (s without one)
//   kept = the positional mask (causal, window, alignment) keeps j, the key is not padded, maskMod(b, h, i, j) holds,
//          and s' is not −∞ (the softmax's own "hidden" marker)
//   the softmax runs over the kept keys of s'.
import type { SymShape } from "../dims.js";
import type { Expr } from "../expr/types.js";
import type { OpContext } from "../op-def.js";
import { checkNodeExpr, gatheredRanks } from "./gathered.js";

export interface AttentionMods {
  /** FlexAttention's score_mod as data (its `score` = scale · q·k), or null. */
  readonly scoreMod?: Expr | null;
  /** FlexAttention's mask_mod as data (true = the key is seen), or null. */
  readonly maskMod?: Expr | null;
  /** The gathered inputs' names, slot by slot (g0, g1, …), shared by both expressions. */
  readonly inputs?: readonly string[];
}

/** The attribute declarations of the modifications (every fused attention op has them, defaults = none). */
export const MOD_ATTRS = {
  scoreMod: {
    type: "expr",
    nullable: true,
    doc: "a score modification (golden-flex FORMAT.md); its score is scale · q·k",
  },
  maskMod: { type: "expr", nullable: true, doc: "a mask modification: true = the key is seen" },
  inputs: { type: "strings", default: [], doc: "names of the gathered inputs g0, g1, …" },
} as const;

/** Whether a call's attributes carry a modification (a kernel without them takes the plain path). */
export function hasMods(a: AttentionMods): boolean {
  return (a.scoreMod ?? null) !== null || (a.maskMod ?? null) !== null;
}

/** Checks both expressions against the gathered inputs connected to the node (type, arity, names, ranks). */
export function checkMods(ctx: OpContext, a: AttentionMods, gathered: readonly (SymShape | undefined)[]): void {
  const ranks = gatheredRanks(ctx, a.inputs ?? [], gathered);
  if ((a.scoreMod ?? null) !== null) checkNodeExpr(ctx, "scoreMod", a.scoreMod, "score", ranks);
  if ((a.maskMod ?? null) !== null) checkNodeExpr(ctx, "maskMod", a.maskMod, "mask", ranks);
}
