// The modifications of a fused attention call (attention-mods.ts) as JavaScript functions, for every kernel that
// evaluates them on the host: the cpu executor's streaming loops and the shared gathered-input gradient
// (attention-input-grad.ts). One place for the rule "s is rounded to float32 when a score modification reads it".
import { BlockClasses } from "./block-class.js";
import { checkExprCached } from "./check.js";
import { compileExpr, type ExprFn, type GatheredTensor } from "./compile.js";
import { derive, treeSize } from "./derive.js";
import type { Expr } from "./types.js";
import type { AttentionMods } from "../ops/attention-mods.js";
import { AttnGraphError } from "@attngraph/tensor";

export interface CompiledMods {
  /** s → s' (the score modification), or undefined. */
  readonly score: ExprFn | undefined;
  /** true where the key is seen (the mask modification), or undefined. */
  readonly keep: ExprFn | undefined;
  /** ∂s'/∂s, when asked for and there is a score modification. */
  readonly dScore: ExprFn | undefined;
  /** The mask modification's block classes (blocks it hides everywhere are skipped), with one. */
  readonly blocks: BlockClasses | undefined;
}

/** The most nodes a derivative may have (checkExpr's bound on any expression). */
const MAX_DERIVED = 10_000;

/**
 * The call's modifications checked against its gathered inputs (the graph's typed errors, naming `<node>.scoreMod`)
 * and compiled; undefined when it has none.
 */
export function compileMods(
  mods: AttentionMods,
  gathered: ReadonlyMap<string, GatheredTensor>,
  node: string,
  derivative: boolean,
): CompiledMods | undefined {
  const scoreMod = mods.scoreMod ?? null;
  const maskMod = mods.maskMod ?? null;
  if (scoreMod === null && maskMod === null) return undefined;
  const ranks = new Map([...gathered].map(([n, t]) => [n, t.shape.length]));
  const checked = (raw: unknown, field: string, role: "score" | "mask"): Expr =>
    checkExprCached(raw, { subject: `${node}.${field}`, role, inputs: ranks });
  const score = scoreMod === null ? undefined : checked(scoreMod, "scoreMod", "score");
  const keep = maskMod === null ? undefined : checked(maskMod, "maskMod", "mask");
  let dScore: ExprFn | undefined;
  if (derivative && score !== undefined) {
    const d = derivedScore(score, node);
    dScore = compileExpr(d, gathered, `${node}.scoreMod (its derivative)`);
  }
  return {
    score: score === undefined ? undefined : compileExpr(score, gathered, `${node}.scoreMod`),
    keep: keep === undefined ? undefined : compileExpr(keep, gathered, `${node}.maskMod`),
    dScore,
    blocks: keep === undefined ? undefined : new BlockClasses(keep, gathered),
  };
}

/** ∂scoreMod/∂score, derived once per checked expression. */
const derivedByExpr = new WeakMap<object, Expr>();

function derivedScore(e: Expr, node: string): Expr {
  const cached = typeof e === "object" ? derivedByExpr.get(e) : undefined;
  if (cached !== undefined) return cached;
  const d = derive(e, { kind: "score" });
  if (treeSize(d, MAX_DERIVED) > MAX_DERIVED)
    throw new AttnGraphError(
      "unsupported",
      `unsupported: the gradient of ${node}.scoreMod: its derivative has more than ${MAX_DERIVED} nodes`,
      { subject: `${node}.scoreMod` },
    );
  if (typeof e === "object") derivedByExpr.set(e, d);
  return d;
}
