// softmax(scale · x) over the last axis, in float64 like the CPU executor: stable (row max subtracted), −∞ → exactly
// 0, a fully masked row → zeros, NaN or +∞ → a NaN row.
import { descDim, descStride, rowBase } from "./strided";

/**
 * Rows [r0, r1) of src, any view (descriptor `desc`) → the same rows of dst dense. dst may be src's own (dense) memory:
 * each element is read first. Rows are independent, so a call may do any range of them (the host's chunks).
 */
export function softmax(src: usize, desc: usize, dst: usize, scale: f64, r0: i32, r1: i32): void {
  const n = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  for (let r = r0; r < r1; r++) {
    const base = rowBase(desc, src, r);
    const o = dst + (<usize>(r * n) << 2);
    let mx: f64 = -Infinity;
    let p = base;
    for (let j: i32 = 0; j < n; j++, p += step) {
      const v = <f64>load<f32>(p);
      // `>` skips NaN on purpose: it still reaches exp below and poisons the sum.
      if (v != -Infinity && scale * v > mx) mx = scale * v;
    }
    let sum: f64 = 0;
    p = base;
    for (let j: i32 = 0; j < n; j++, p += step) {
      const v = <f64>load<f32>(p);
      const e: f64 = v == -Infinity ? 0 : Math.exp(scale * v - mx);
      sum += e;
      store<f32>(o + (<usize>j << 2), <f32>e);
    }
    const inv: f64 = sum == 0 ? 0 : 1 / sum;
    for (let j: i32 = 0; j < n; j++) {
      const q = o + (<usize>j << 2);
      store<f32>(q, <f32>(<f64>load<f32>(q) * inv));
    }
  }
}
