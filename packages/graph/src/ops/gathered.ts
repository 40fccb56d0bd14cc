// The gathered inputs of the expression ops (score-mod, mask-mod and the fused attention with modifications): up to
// MAX_GATHERED tensors in slots g0, g1, …, named for the expressions by the `inputs` attribute (slot i is the tensor
// `inputs[i]`). Declared as optional slots because an op declares its inputs once; `inputs` says how many are used.
import type { SymShape } from "../dims.js";
import { checkExpr, type CheckedExpr } from "../expr/check.js";
import type { OpContext, OpInput } from "../op-def.js";

export const MAX_GATHERED = 8;

/** The slots g0 … g7, each optional, any rank. */
export const GATHERED_SLOTS: readonly OpInput[] = Array.from({ length: MAX_GATHERED }, (_, i) => ({
  name: `g${i}`,
  optional: true,
  doc: `the expression's gathered input inputs[${i}]`,
}));

/** A name an expression can use for a gathered input: not a variable, not empty. */
const NAME = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;
const RESERVED = new Set(["score", "b", "h", "q", "kv"]);

/** Checks `inputs` (the names) against the connected slots; returns name → rank. */
export function gatheredRanks(
  ctx: OpContext,
  names: readonly string[],
  slots: readonly (SymShape | undefined)[],
): Map<string, number> {
  if (names.length > MAX_GATHERED)
    ctx.fail("inputs", "too many gathered inputs", `at most ${MAX_GATHERED}`, String(names.length));
  const ranks = new Map<string, number>();
  names.forEach((n, i) => {
    if (!NAME.test(n) || RESERVED.has(n))
      ctx.fail(
        "inputs",
        "invalid gathered input name",
        "a name (letters, digits, _ . : -), not score, b, h, q or kv",
        JSON.stringify(n),
      );
    if (ranks.has(n)) ctx.fail("inputs", "a gathered input named twice", "distinct names", n);
    const shape = slots[i];
    if (shape === undefined) ctx.fail(`g${i}`, `missing gathered input ${n}`, "a tensor in this slot", "nothing");
    ranks.set(n, shape.length);
  });
  for (let i = names.length; i < slots.length; i++) {
    if (slots[i] !== undefined)
      ctx.fail(
        `g${i}`,
        "a tensor in a slot no name is given for",
        `names in inputs for g0 … g${i}`,
        `${names.length} names`,
      );
  }
  return ranks;
}

/** Checks an expression attribute of the node (`field`) against its gathered inputs. */
export function checkNodeExpr(
  ctx: OpContext,
  field: string,
  raw: unknown,
  role: "score" | "mask",
  ranks: ReadonlyMap<string, number>,
): CheckedExpr {
  return checkExpr(raw, { subject: `${ctx.node}.${field}`, role, inputs: ranks });
}

/** The gathered slots' inputs of a node, as a record for GraphBuilder.add: { g0: names[0]'s value, … }. */
export function gatheredInputs(values: readonly (string | undefined)[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  values.forEach((v, i) => (out[`g${i}`] = v));
  return out;
}

/** The `inputs` attribute of the expression ops: the gathered inputs' names, slot by slot. */
export const GATHERED_NAMES_ATTR = { type: "strings", default: [], doc: "names of g0, g1, …" } as const;

/**
 * The shape rule of score-mod and mask-mod: the expression attribute `expr` checked in its role against the gathered
 * inputs connected, the output x's shape.
 */
export function exprModShape(role: "score" | "mask") {
  return (
    [x, ...gathered]: readonly (SymShape | undefined)[],
    { expr, inputs }: { readonly expr: unknown; readonly inputs: readonly string[] },
    ctx: OpContext,
  ): SymShape => {
    checkNodeExpr(ctx, "expr", expr, role, gatheredRanks(ctx, inputs, gathered));
    return x!;
  };
}
