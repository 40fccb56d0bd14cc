// softmax(scale · x) over the last axis, in float64 like the CPU executor: stable (row max subtracted), −∞ → exactly
// 0, a fully masked row → zeros, NaN or +∞ → a NaN row.
import { descDim, descRows, descStride, rowBase } from "./strided";

/** src: any view (descriptor `desc`) → dst dense. dst may be src's own (dense) memory: each element is read first. */
export function softmax(src: usize, desc: usize, dst: usize, scale: f64): void {
  const rows = descRows(desc);
  const n = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  for (let r: i32 = 0; r < rows; r++) {
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
