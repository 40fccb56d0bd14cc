// For tests only: the benchmark's attention in float64, written out loop by loop with no library, so that every
// implementation (attngraph's cpu executor included) is checked against something that shares no code with it.
import type { Problem } from "./problem.js";

/** y = causal multi-head attention with out_proj (bias) of p.x, in float64. */
export function referenceAttention(p: Problem): Float64Array {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  const linear = (x: ArrayLike<number>, w: Float32Array, rows: number) => {
    const y = new Float64Array(rows * d);
    for (let r = 0; r < rows; r++) for (let o = 0; o < d; o++) {
      let acc = 0;
      for (let i = 0; i < d; i++) acc += x[r * d + i]! * w[o * d + i]!;
      y[r * d + o] = acc;
    }
    return y;
  };
  const q = linear(p.x, p.wq, b * t);
  const k = linear(p.x, p.wk, b * t);
  const v = linear(p.x, p.wv, b * t);
  const ctx = new Float64Array(b * t * d);
  for (let n = 0; n < b; n++) for (let head = 0; head < h; head++) for (let i = 0; i < t; i++) {
    const s: number[] = [];
    for (let j = 0; j <= i; j++) {
      let acc = 0;
      for (let e = 0; e < D; e++) acc += q[(n * t + i) * d + head * D + e]! * k[(n * t + j) * d + head * D + e]!;
      s.push(acc * p.scale);
    }
    const max = Math.max(...s);
    const ex = s.map((z) => Math.exp(z - max));
    const sum = ex.reduce((a, z) => a + z, 0);
    for (let e = 0; e < D; e++) {
      let acc = 0;
      for (let j = 0; j <= i; j++) acc += (ex[j]! / sum) * v[(n * t + j) * d + head * D + e]!;
      ctx[(n * t + i) * d + head * D + e] = acc;
    }
  }
  const y = linear(ctx, p.wo, b * t);
  for (let r = 0; r < b * t; r++) for (let o = 0; o < d; o++) y[r * d + o]! += p.bo[o]!;
  return y;
}

/** max |a − ref|. */
export function maxAbsDiff(a: ArrayLike<number>, ref: ArrayLike<number>): number {
  if (a.length !== ref.length) return Infinity;
  let m = 0;
  for (let i = 0; i < ref.length; i++) m = Math.max(m, Math.abs(a[i]! - ref[i]!));
  return Number.isNaN(m) ? Infinity : m;
}
