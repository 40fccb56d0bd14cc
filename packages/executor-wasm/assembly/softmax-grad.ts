// Backward of softmax and of mask/ALiBi, row by row in float64 (as the forward softmax), f64x2 lanes where both rows
// are contiguous:
// - softmaxGrad: dx = scale · y ⊙ (grad − Σ_row grad ⊙ y). A row whose y is all 0 (fully masked) is exactly +0 whatever
//   its grad; anywhere else NaN propagates by the formula (a NaN in the row's sum makes the whole row NaN).
// - maskGrad: 0 where the forward output is −∞, scale · grad (one float64 product rounded once) everywhere else.
import { promoteHigh, promoteLow } from "./layer-norm";
import { at, descDim, descStride, rowBase } from "./strided";

/** Two f64x2 halves rounded back into 4 float32 lanes. */
@inline export function demote2(lo: v128, hi: v128): v128 {
  return v128.shuffle<f32>(f32x4.demote_f64x2_zero(lo), f32x4.demote_f64x2_zero(hi), 0, 1, 4, 5);
}

/**
 * Rows [r0, r1) of y and grad (any views, descriptors `ydesc` and `gdesc`, rows of S along their last axis) → the same
 * rows of dst, dense [rows, S].
 */
export function softmaxGrad(y: usize, ydesc: usize, g: usize, gdesc: usize, dst: usize, scale: f64, r0: i32, r1: i32): void {
  const n = descDim(ydesc, 5);
  const ys = descStride(ydesc, 5);
  const gs = descStride(gdesc, 5);
  const dense = ys == 1 && gs == 1;
  const n4 = dense ? n & ~3 : 0;
  const zero4 = f32x4.splat(0);
  for (let r = r0; r < r1; r++) {
    const py = rowBase(ydesc, y, r);
    const pg = rowBase(gdesc, g, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    // Σ grad ⊙ y, and whether any y is nonzero (NaN counts as nonzero).
    let a0 = f64x2.splat(0);
    let a1 = f64x2.splat(0);
    let any = zero4;
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      const vy = v128.load(py + k);
      const vg = v128.load(pg + k);
      any = v128.or(any, f32x4.ne(vy, zero4));
      a0 = f64x2.add(a0, f64x2.mul(promoteLow(vg), promoteLow(vy)));
      a1 = f64x2.add(a1, f64x2.mul(promoteHigh(vg), promoteHigh(vy)));
    }
    const s2 = f64x2.add(a0, a1);
    let dot: f64 = f64x2.extract_lane(s2, 0) + f64x2.extract_lane(s2, 1);
    let visible = v128.any_true(any);
    for (; j < n; j++) {
      const yv = <f64>load<f32>(at(py, j * ys));
      if (yv != 0) visible = true;
      dot += <f64>load<f32>(at(pg, j * gs)) * yv;
    }
    if (!visible) {
      memory.fill(o, 0, <usize>n << 2);
      continue;
    }
    const sc = f64x2.splat(scale);
    const d2 = f64x2.splat(dot);
    for (j = 0; j < n4; j += 4) {
      const k = <usize>j << 2;
      const vy = v128.load(py + k);
      const vg = v128.load(pg + k);
      const lo = f64x2.mul(f64x2.mul(sc, promoteLow(vy)), f64x2.sub(promoteLow(vg), d2));
      const hi = f64x2.mul(f64x2.mul(sc, promoteHigh(vy)), f64x2.sub(promoteHigh(vg), d2));
      v128.store(o + k, demote2(lo, hi));
    }
    for (; j < n; j++) {
      const yv = <f64>load<f32>(at(py, j * ys));
      const gv = <f64>load<f32>(at(pg, j * gs));
      store<f32>(o + (<usize>j << 2), <f32>(scale * yv * (gv - dot)));
    }
  }
}

/**
 * Rows [r0, r1) of grad and masked (any views of the same shape, descriptors `gdesc` and `mdesc`) → the same rows of
 * dst, dense: masked == −∞ ? 0 : scale · grad.
 */
export function maskGrad(g: usize, gdesc: usize, m: usize, mdesc: usize, dst: usize, scale: f64, r0: i32, r1: i32): void {
  const n = descDim(gdesc, 5);
  const gs = descStride(gdesc, 5);
  const ms = descStride(mdesc, 5);
  const n4 = gs == 1 && ms == 1 ? n & ~3 : 0;
  const sc = f64x2.splat(scale);
  const ninf = f32x4.splat(-Infinity);
  for (let r = r0; r < r1; r++) {
    const pg = rowBase(gdesc, g, r);
    const pm = rowBase(mdesc, m, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      const vg = v128.load(pg + k);
      const hidden = f32x4.eq(v128.load(pm + k), ninf);
      const v = demote2(f64x2.mul(sc, promoteLow(vg)), f64x2.mul(sc, promoteHigh(vg)));
      v128.store(o + k, v128.andnot(v, hidden));
    }
    for (; j < n; j++) {
      const hidden = load<f32>(at(pm, j * ms)) == -Infinity;
      store<f32>(o + (<usize>j << 2), hidden ? 0 : <f32>(scale * <f64>load<f32>(at(pg, j * gs))));
    }
  }
}
