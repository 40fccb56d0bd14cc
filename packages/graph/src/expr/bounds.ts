// Whether every gathered read of an expression stays inside its input for a given problem size, proved without
// evaluating it: interval arithmetic over the position variables' ranges (b in [0, B), h in [0, H), q in [0, L), kv in
// [0, S)). ALiBi's slopes[h], a relative bias table[h, q − kv + S − 1] and document ids doc[b, q] are proved so; an
// index that depends on a gathered value (or that only a `where` keeps in range) is not, and an executor that cannot
// check each read as it makes it (WGSL) checks those on the host first. The arithmetic is intervals.ts's (reads unbounded).
import { readSites } from "./compile.js";
import { Intervals, isIntegral, type Interval } from "./intervals.js";
import type { Expr } from "./types.js";

/** The ranges of the variables: b, h, q, kv over [0, size − 1]. */
export interface VarSizes {
  readonly B: number;
  readonly H: number;
  readonly L: number;
  readonly S: number;
}

function interval(e: Expr, sizes: VarSizes): Interval {
  return new Intervals({ b: [0, sizes.B - 1], h: [0, sizes.H - 1], q: [0, sizes.L - 1], kv: [0, sizes.S - 1] }).num(e);
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
