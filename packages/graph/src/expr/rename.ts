// Renaming an expression's gathered inputs: when two expressions (a score and a mask modification) become one fused
// step, a name each used for a different tensor must become two names, one per slot of the fused step.
import { isInput, type Expr } from "./types.js";

/** A copy of `e` with every read of a name in `names` reading the mapped name instead (shared subtrees stay shared). */
export function renameReads(e: Expr, names: ReadonlyMap<string, string>): Expr {
  if (names.size === 0) return e;
  const memo = new Map<object, Expr>();
  const walk = (x: Expr): Expr => {
    if (typeof x !== "object") return x;
    const seen = memo.get(x);
    if (seen !== undefined) return seen;
    const out: Expr = isInput(x)
      ? { op: "input", name: names.get(x.name) ?? x.name, index: x.index.map(walk) }
      : { op: x.op, args: x.args.map(walk) };
    memo.set(x, out);
    return out;
  };
  return walk(e);
}
