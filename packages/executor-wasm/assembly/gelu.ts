// GELU on 4 float32 lanes, both of PyTorch's forms, written so that neither cancels for negative x (where the naive
// x/2 · (1 + erf) and x/2 · (1 + tanh) subtract two numbers close to 1):
// - "none": x/2 · (1 + erf(x/√2)) = x/2 · erfc(|x|/√2) for x < 0 and x/2 · (2 − erfc(x/√2)) for x ≥ 0, with erfc from
//   Numerical Recipes' `erfcc` (a Chebyshev fit t · exp(−z² + P(t)), t = 1/(1 + z/2), relative error < 1.2e-7 for
//   every z ≥ 0: accurate where erfc is tiny, which Abramowitz–Stegun 7.1.26's absolute 1.5e-7 is not). z² = x²/2 is
//   where float32 would lose it (x = −10: z² = 50, whose rounding alone is a relative 4e-6 of the result), so x² is
//   taken exactly, Cephes style: x = xh + xl with xh's low 12 mantissa bits cleared, xh² exact, and
//   exp(−x²/2) = exp(−xh²/2) · exp(−xl·(x + xh)/2). GELU's error is then below 1e-6 relative over |x| < 10.
// - "tanh": x/2 · (1 + tanh(u)) = x · sigmoid(2u) = x / (1 + exp(−2u)), u = √(2/π) · (x + 0.044715 x³). Below 1e-6
//   absolute; relative error grows with |2u| rounded to float32, to about 1e-5 where the value is below 1e-20.
// Plain multiply and add (never the relaxed fused multiply-add), so both module flavours give the same bits. NaN
// stays NaN; +∞ → +∞ and −∞ → NaN in both forms, as the formulas give in IEEE arithmetic (−∞ · 0).
import { exp4 } from "./simd";
import { descDim, descStride, rowBase } from "./strided";

@inline export function splat(v: f32): v128 {
  return f32x4.splat(v);
}

/**
 * erfc(|x|/√2) (NaN stays NaN): NR erfcc with an exact x². |x| is capped at 20 (erfc(20/√2) ≈ 1e-89 is 0 in float32
 * anyway), so ±∞ gives 0 rather than ∞ − ∞; exp4 flushes exp(−xh²/2) to 0 once it is below float32's range.
 */
@inline export function erfcHalf4(x: v128): v128 {
  const a = f32x4.pmin(f32x4.abs(x), splat(20)); // pmin: one instruction, and a NaN |x| (first) stays NaN
  const ah = v128.and(a, i32x4.splat(0xfffff000));
  const lo = f32x4.mul(f32x4.sub(a, ah), f32x4.add(a, ah)); // a² − ah², to float32 precision (ah² is exact)
  const z = f32x4.mul(a, splat(0.70710678118654752));
  const t = f32x4.div(splat(1), f32x4.add(splat(1), f32x4.mul(splat(0.5), z)));
  let p = splat(0.17087277);
  p = f32x4.add(f32x4.mul(p, t), splat(-0.82215223));
  p = f32x4.add(f32x4.mul(p, t), splat(1.48851587));
  p = f32x4.add(f32x4.mul(p, t), splat(-1.13520398));
  p = f32x4.add(f32x4.mul(p, t), splat(0.27886807));
  p = f32x4.add(f32x4.mul(p, t), splat(-0.18628806));
  p = f32x4.add(f32x4.mul(p, t), splat(0.09678418));
  p = f32x4.add(f32x4.mul(p, t), splat(0.37409196));
  p = f32x4.add(f32x4.mul(p, t), splat(1.00002368));
  p = f32x4.add(f32x4.mul(p, t), splat(-1.26551223));
  const big = exp4(f32x4.mul(f32x4.mul(ah, ah), splat(-0.5)));
  const small = exp4(f32x4.sub(p, f32x4.mul(lo, splat(0.5))));
  return f32x4.mul(f32x4.mul(t, big), small);
}

/** The exact (erf) form. */
@inline function geluErf4(x: v128): v128 {
  const e = erfcHalf4(x);
  // 1 + erf(x/√2) is 2 − erfc for x ≥ 0 and erfc(|x|/√2) for x < 0 (erf is odd).
  const onePlusErf = v128.bitselect(f32x4.sub(splat(2), e), e, f32x4.ge(x, splat(0)));
  return f32x4.mul(f32x4.mul(splat(0.5), x), onePlusErf);
}

/**
 * The tanh form as x / (1 + exp(−2u)). exp4 saturates near 2^127 where the true exp overflows, so past 88 the exp is
 * taken as +∞ outright: a large negative x then gives x/∞ = −0 (not a small nonzero), and −∞ gives −∞/∞ = NaN, as
 * x/2 · (1 + tanh u) does in IEEE arithmetic.
 */
@inline function geluTanh4(x: v128): v128 {
  const x3 = f32x4.mul(f32x4.mul(x, x), x);
  // −2u = −2√(2/π) · (x + 0.044715 x³)
  const m2u = f32x4.mul(f32x4.add(x, f32x4.mul(splat(0.044715), x3)), splat(-1.5957691216057308));
  const e = v128.bitselect(splat(Infinity), exp4(m2u), f32x4.gt(m2u, splat(88)));
  return f32x4.div(x, f32x4.add(splat(1), e));
}

@inline function gelu4(x: v128, tanh: bool): v128 {
  return tanh ? geluTanh4(x) : geluErf4(x);
}

/** `count` (< 4) elements from p with byte step `step` into the low lanes (the others 0). */
@inline export function loadSome(p: usize, step: usize, count: i32): v128 {
  let v = f32x4.splat(0);
  if (count > 0) v = f32x4.replace_lane(v, 0, load<f32>(p));
  if (count > 1) v = f32x4.replace_lane(v, 1, load<f32>(p + step));
  if (count > 2) v = f32x4.replace_lane(v, 2, load<f32>(p + 2 * step));
  return v;
}

@inline export function storeSome(o: usize, v: v128, count: i32): void {
  if (count > 0) store<f32>(o, f32x4.extract_lane(v, 0));
  if (count > 1) store<f32>(o + 4, f32x4.extract_lane(v, 1));
  if (count > 2) store<f32>(o + 8, f32x4.extract_lane(v, 2));
}

/** n contiguous elements from src → dst (dst may be src: each vector is read before it is written). */
export function gelu(src: usize, dst: usize, n: i32, tanh: bool): void {
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const at = <usize>j << 2;
    v128.store(dst + at, gelu4(v128.load(src + at), tanh));
  }
  if (j < n) storeSome(dst + (<usize>j << 2), gelu4(loadSome(src + (<usize>j << 2), 4, n - j), tanh), n - j);
}

/**
 * Rows [r0, r1) of any view (descriptor `desc`) → the same rows of dst, dense: strided elements gathered 4 at a time
 * into the same vector code, so a view gives the bits its dense copy would.
 */
export function geluStrided(src: usize, desc: usize, dst: usize, tanh: bool, r0: i32, r1: i32): void {
  const n = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  const n4 = n & ~3;
  for (let r = r0; r < r1; r++) {
    let p = rowBase(desc, src, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    let j: i32 = 0;
    for (; j < n4; j += 4, p += step << 2) {
      let v = f32x4.splat(load<f32>(p));
      v = f32x4.replace_lane(v, 1, load<f32>(p + step));
      v = f32x4.replace_lane(v, 2, load<f32>(p + 2 * step));
      v = f32x4.replace_lane(v, 3, load<f32>(p + 3 * step));
      v128.store(o + (<usize>j << 2), gelu4(v, tanh));
    }
    if (j < n) storeSome(o + (<usize>j << 2), gelu4(loadSome(p, step, n - j), tanh), n - j);
  }
}
