// Whether every gathered read of an expression stays inside its input for a given problem size, proved without
// evaluating it: interval arithmetic over the position variables' ranges (b in [0, B), h in [0, H), q in [0, L), kv in
// [0, S)). ALiBi's slopes[h], a relative bias table[h, q − kv + S − 1] and document ids doc[b, q] are proved so; an
// index that depends on a gathered value (or that only a `where` keeps in range) is not, and an executor that cannot
// check each read as it makes it (WGSL) checks those on the host first.
import { readSites } from "./compile.js";
import type { Expr } from "./types.js";

type Interval = readonly [number, number];
const ANY: Interval = [-Infinity, Infinity];

/** The ranges of the variables: b, h, q, kv over [0, size − 1]. */
export interface VarSizes {
  readonly B: number;
  readonly H: number;
  readonly L: number;
  readonly S: number;
}

function interval(e: Expr, sizes: VarSizes): Interval {
  if (typeof e === "number") return [e, e];
  if (typeof e === "string") {
    const n = e === "b" ? sizes.B : e === "h" ? sizes.H : e === "q" ? sizes.L : e === "kv" ? sizes.S : undefined;
    return n === undefined ? ANY : [0, n - 1];
  }
  if (e.op === "input") return ANY;
  const a = e.args.map((x) => interval(x, sizes));
  const [x, y] = a as [Interval, Interval];
  switch (e.op) {
    case "add":
      return [x[0] + y[0], x[1] + y[1]];
    case "sub":
      return [x[0] - y[1], x[1] - y[0]];
    case "mul": {
      // 0 · ∞: an unbounded factor may be ∞ itself (1 / 0), and 0 · ∞ is NaN, not 0: nothing is proved.
      const p = [x[0] * y[0], x[0] * y[1], x[1] * y[0], x[1] * y[1]];
      return p.some(Number.isNaN) ? ANY : [Math.min(...p), Math.max(...p)];
    }
    case "min":
      return [Math.min(x[0], y[0]), Math.min(x[1], y[1])];
    case "max":
      return [Math.max(x[0], y[0]), Math.max(x[1], y[1])];
    case "neg":
      return [-x[1], -x[0]];
    case "abs":
      return x[0] >= 0 ? x : x[1] <= 0 ? [-x[1], -x[0]] : [0, Math.max(-x[0], x[1])];
    case "floor":
      return [Math.floor(x[0]), Math.floor(x[1])];
    case "mod": {
      // Python's mod by a positive constant c lies in [0, c − 1] for an integer dividend and c, else in [0, c) (closed
      // here at c: an interval's ends are reached values or bounds). A non-finite dividend gives NaN: nothing proved.
      if (!(y[0] === y[1] && y[0] > 0) || !Number.isFinite(x[0]) || !Number.isFinite(x[1])) return ANY;
      return [0, isIntegral(e.args[0]!) && Number.isInteger(y[0]) ? y[0] - 1 : y[0]];
    }
    case "where":
      return [Math.min(a[1]![0], a[2]![0]), Math.max(a[1]![1], a[2]![1])];
    default:
      return ANY;
  }
}

/**
 * The reads of `e` that cannot be proved inside their input (`shapes`, by name) for these sizes, by the path that
 * names them; empty when every read is proved safe. An index proved in range is an integer (checkExpr's types).
 */
export function unprovedReads(e: Expr, sizes: VarSizes, shapes: ReadonlyMap<string, readonly number[]>): string[] {
  return readSites(e)
    .filter(({ read }) => {
      const shape = shapes.get(read.name)!;
      return read.index.some((i, axis) => {
        if (typeof i === "object" && readSites(i).length > 0) return true; // an index read from a tensor: its values
        const [lo, hi] = interval(i, sizes);
        return !(lo >= 0 && hi <= shape[axis]! - 1) || !isIntegral(i);
      });
    })
    .map(({ path }) => path);
}

/** Whether `e` is integer-valued by construction (positions, integer literals, integer arithmetic, floor). */
function isIntegral(e: Expr): boolean {
  if (typeof e === "number") return Number.isInteger(e);
  if (typeof e === "string") return e !== "score";
  if (e.op === "input" || e.op === "div") return false;
  if (["add", "sub", "mul", "min", "max", "mod", "neg", "abs"].includes(e.op)) return e.args.every(isIntegral);
  if (e.op === "floor") return true;
  if (e.op === "where") return isIntegral(e.args[1]!) && isIntegral(e.args[2]!);
  return false;
}
