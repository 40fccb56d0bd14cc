// layer norm over the last axis (nn.LayerNorm): y = (x − mean) / sqrt(var + eps) · weight + bias, biased variance.
// Everything is float64, two-pass (the mean first, then the sum of squared deviations): a row offset far from 0
// (1e4 + small deviations) would lose its deviations to float32 rounding of x − mean. A constant row sums to exactly
// E · x (partial sums of equal float32 values are exact in float64), so its deviations are exactly 0 and the output
// is exactly the bias, never 0/0. Dense rows (and weight/bias) take f64x2 lanes: 4 float32 loads promoted to two
// f64x2 halves, two independent accumulators.
import { NORM_MEAN, NORM_RSTD } from "./norm-grad-rows";
import { at, descDim, descStride, rowBase } from "./strided";

/** The upper two float32 lanes moved down, for `f64x2.promote_low_f32x4`. */
@inline export function high(v: v128): v128 {
  return v128.shuffle<f32>(v, v, 2, 3, 2, 3);
}

@inline export function promoteLow(v: v128): v128 {
  return f64x2.promote_low_f32x4(v);
}

@inline export function promoteHigh(v: v128): v128 {
  return f64x2.promote_low_f32x4(high(v));
}

@inline export function lanes(a: v128, b: v128): f64 {
  const s = f64x2.add(a, b);
  return f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
}

/**
 * The weight, bias and epsilon of layerNorm, layerNormGrad and rmsNormGrad: written field by field by name on the host
 * (src/kernels/layer-norm.ts, writeAffine: `eps` a float64 at 0, then w, ws, b, bs 4 bytes each; a test holds the
 * offsets to the compiler's). w and b [E] with element strides ws and bs, 0 when absent (the gradients read no b).
 */
@unmanaged export class AffineParams {
  eps: f64;
  w: usize; ws: i32;
  b: usize; bs: i32;
}

/**
 * NORM_MEAN and NORM_RSTD = 1/sqrt(biased variance + eps) of the n elements at p, `s` elements apart, two-pass in
 * float64: with `lanes4` (s must be 1) the first n & ~3 elements through f64x2 lanes into two accumulators, the rest one
 * by one. The forward rows and both gradients call it, so the gradients recompute the forward's statistics to the bit.
 */
export function rowStats(p: usize, s: i32, lanes4: bool, n: i32, eps: f64): void {
  const n4 = lanes4 ? n & ~3 : 0;
  let a0 = f64x2.splat(0);
  let a1 = f64x2.splat(0);
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const v = v128.load(p + (<usize>j << 2));
    a0 = f64x2.add(a0, promoteLow(v));
    a1 = f64x2.add(a1, promoteHigh(v));
  }
  let sum = lanes(a0, a1);
  for (; j < n; j++) sum += <f64>load<f32>(at(p, j * s));
  const mean = sum / <f64>n;
  const m2 = f64x2.splat(mean);
  a0 = f64x2.splat(0);
  a1 = f64x2.splat(0);
  for (j = 0; j < n4; j += 4) {
    const v = v128.load(p + (<usize>j << 2));
    const d0 = f64x2.sub(promoteLow(v), m2);
    const d1 = f64x2.sub(promoteHigh(v), m2);
    a0 = f64x2.add(a0, f64x2.mul(d0, d0));
    a1 = f64x2.add(a1, f64x2.mul(d1, d1));
  }
  let ss = lanes(a0, a1);
  for (; j < n; j++) {
    const d = <f64>load<f32>(at(p, j * s)) - mean;
    ss += d * d;
  }
  NORM_MEAN = mean;
  NORM_RSTD = 1 / Math.sqrt(ss / <f64>n + eps);
}

/**
 * Rows [r0, r1) of src, any view (descriptor `desc`, rows along its last axis of length E) → the same rows of dst,
 * dense. w and b: weight and bias [E] with element strides ws and bs, 0 when absent. dst may be src's own dense memory
 * (in place): a row is read twice before its first element is written. Rows are independent (the host's chunks).
 */
export function layerNorm(src: usize, desc: usize, dst: usize, p: AffineParams, r0: i32, r1: i32): void {
  const w = p.w, ws = p.ws, b = p.b, bs = p.bs, eps = p.eps;
  const n = descDim(desc, 5);
  const s = descStride(desc, 5);
  for (let r = r0; r < r1; r++) layerNormRow(rowBase(desc, src, r), s, dst + ((<usize>r * <usize>n) << 2), n, w, ws, b, bs, eps);
}

/**
 * One row of n elements at p, `s` elements apart, → n contiguous elements at o (which may be p itself when s is 1):
 * f64x2 lanes when the row, weight and bias are all contiguous, else the scalar loop. Also add-layer-norm's second half.
 */
@inline export function layerNormRow(p: usize, s: i32, o: usize, n: i32, w: usize, ws: i32, b: usize, bs: i32, eps: f64): void {
  if (s == 1 && (w == 0 || ws == 1) && (b == 0 || bs == 1)) denseRow(p, o, n, w, b, eps);
  else stridedRow(p, s, o, n, w, ws, b, bs, eps);
}

/** One row whose elements, weight and bias are contiguous: f64x2 lanes, the last n % 4 elements one by one. */
function denseRow(p: usize, o: usize, n: i32, w: usize, b: usize, eps: f64): void {
  const n4 = n & ~3;
  rowStats(p, 1, true, n, eps);
  const mean = NORM_MEAN;
  const inv = NORM_RSTD;
  const m2 = f64x2.splat(mean);
  const i2 = f64x2.splat(inv);
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const at = <usize>j << 2;
    const v = v128.load(p + at);
    let y0 = f64x2.mul(f64x2.sub(promoteLow(v), m2), i2);
    let y1 = f64x2.mul(f64x2.sub(promoteHigh(v), m2), i2);
    if (w != 0) {
      const wv = v128.load(w + at);
      y0 = f64x2.mul(y0, promoteLow(wv));
      y1 = f64x2.mul(y1, promoteHigh(wv));
    }
    if (b != 0) {
      const bv = v128.load(b + at);
      y0 = f64x2.add(y0, promoteLow(bv));
      y1 = f64x2.add(y1, promoteHigh(bv));
    }
    v128.store(o + at, v128.shuffle<f32>(f32x4.demote_f64x2_zero(y0), f32x4.demote_f64x2_zero(y1), 0, 1, 4, 5));
  }
  for (; j < n; j++) {
    const at = <usize>j << 2;
    store<f32>(o + at, <f32>affine((<f64>load<f32>(p + at) - mean) * inv, w, at, b, at));
  }
}

/** One row read with stride s (weight and bias with their own strides): the same float64 formula, one element at a time. */
function stridedRow(p: usize, s: i32, o: usize, n: i32, w: usize, ws: i32, b: usize, bs: i32, eps: f64): void {
  const step = <usize>(s << 2);
  rowStats(p, s, false, n, eps);
  const mean = NORM_MEAN;
  const inv = NORM_RSTD;
  let q = p;
  for (let j: i32 = 0; j < n; j++, q += step) {
    const y = affine((<f64>load<f32>(q) - mean) * inv, w, <usize>(j * ws) << 2, b, <usize>(j * bs) << 2);
    store<f32>(o + (<usize>j << 2), <f32>y);
  }
}

/** y · weight + bias, each when present (byte offsets into weight and bias). */
@inline function affine(y: f64, w: usize, wAt: usize, b: usize, bAt: usize): f64 {
  if (w != 0) y *= <f64>load<f32>(w + wAt);
  if (b != 0) y += <f64>load<f32>(b + bAt);
  return y;
}
