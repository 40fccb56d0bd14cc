// NumPy/PyTorch broadcasting of two shapes, on symbolic dims (graph shape rules) and on concrete ones (kernels): shapes
// line up from the last axis; at each axis the dims must be equal or one of them 1, and a missing leading axis counts
// as 1. One rule for both, so what a graph accepts is what every kernel computes.
import type { Dim, SymShape } from "./dims.js";

/**
 * The broadcast shape of a and b. `fail(i, da, db)` is called (and must throw) at the first axis, counted from the end
 * (0 = last), where the known dims differ and neither is 1. A symbolic dim against 1 gives the symbol; against a known
 * size other than 1 it gives that size (the symbol must then be bound to it or to 1, checked at run time); two
 * different symbols give a's.
 */
export function broadcastShapes(
  a: SymShape,
  b: SymShape,
  fail: (axisFromEnd: number, da: Dim, db: Dim) => never,
): Dim[] {
  const n = Math.max(a.length, b.length);
  const out: Dim[] = new Array<Dim>(n);
  for (let i = 0; i < n; i++) {
    const da = i < a.length ? a[a.length - 1 - i]! : 1;
    const db = i < b.length ? b[b.length - 1 - i]! : 1;
    let d: Dim;
    if (da === 1) d = db;
    else if (db === 1 || da === db) d = da;
    else if (typeof da === "number" && typeof db === "number") fail(i, da, db);
    else d = typeof da === "number" ? da : typeof db === "number" ? db : da;
    out[n - 1 - i] = d!;
  }
  return out;
}

/**
 * Element strides that read `shape` (with `strides`) as if it had the broadcast shape `target`: a leading axis it
 * lacks, or an axis of 1 that stretches, gets stride 0. `target` must be a broadcast of `shape` (broadcastShapes).
 */
export function broadcastStrides(
  shape: readonly number[],
  strides: readonly number[],
  target: readonly number[],
): number[] {
  const lead = target.length - shape.length;
  return target.map((d, i) => {
    if (i < lead) return 0;
    const s = shape[i - lead]!;
    return s === 1 && d !== 1 ? 0 : strides[i - lead]!;
  });
}
