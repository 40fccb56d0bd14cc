// SIMD helpers shared by the matmul and the fused attention: the multiply-add that is fused in the relaxed-SIMD
// flavour (ASC_FEATURE_RELAXED_SIMD is a compile-time constant, so one source gives both flavours), and a vector exp.

/** acc + a · b; one relaxed fused multiply-add when the flavour has relaxed SIMD (it may or may not round once). */
@inline export function madd(a: v128, b: v128, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, acc);
  return f32x4.add(acc, f32x4.mul(a, b));
}

/**
 * exp of 4 float32 lanes (Cephes expf: x = n·ln2 + r, a degree-5 polynomial for e^r, 2^n through the exponent bits),
 * within about 2 ulp on the range that does not underflow. NaN stays NaN; callers mask −∞ themselves (it gives ~1e-38).
 */
@inline export function exp4(x: v128): v128 {
  // pmin/pmax (one minps/maxps each; f32x4.min/max are multi-instruction sequences for NaN and ±0 in engines): x
  // first, so a NaN x stays NaN.
  x = f32x4.pmin(x, f32x4.splat(88.3762626647949));
  x = f32x4.pmax(x, f32x4.splat(-88.3762626647949));
  // n = round(x·log2 e) by the 1.5·2^23 trick: adding it leaves n in the low mantissa bits of `t` (|n| ≤ 128), so n
  // needs no floor and no float→int conversion (both multi-instruction sequences in engines without SSE4.1/AVX-512).
  const t = f32x4.add(f32x4.mul(x, f32x4.splat(1.44269504088896341)), f32x4.splat(12582912.0));
  const fx = f32x4.sub(t, f32x4.splat(12582912.0));
  x = f32x4.sub(x, f32x4.mul(fx, f32x4.splat(0.693359375)));
  x = f32x4.sub(x, f32x4.mul(fx, f32x4.splat(-2.12194440e-4)));
  const z = f32x4.mul(x, x);
  let y = f32x4.splat(1.9875691500e-4);
  y = f32x4.add(f32x4.mul(y, x), f32x4.splat(1.3981999507e-3));
  y = f32x4.add(f32x4.mul(y, x), f32x4.splat(8.3334519073e-3));
  y = f32x4.add(f32x4.mul(y, x), f32x4.splat(4.1665795894e-2));
  y = f32x4.add(f32x4.mul(y, x), f32x4.splat(1.6666665459e-1));
  y = f32x4.add(f32x4.mul(y, x), f32x4.splat(5.0000001201e-1));
  y = f32x4.add(f32x4.add(f32x4.mul(y, z), x), f32x4.splat(1.0));
  // 2^n: t's bits are 0x4B400000 + n, and the shift by 23 drops 0x4B400000's part (its low 9 bits are 0).
  const pow2n = i32x4.shl(i32x4.add(t, i32x4.splat(127)), 23);
  return f32x4.mul(y, pow2n);
}

/** The largest of 4 lanes (NaN if any lane is NaN). */
@inline export function hmax(v: v128): f32 {
  return max(max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)), max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)));
}

@inline export function hsum(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/**
 * tanh of 4 float32 lanes (Cephes tanhf): for |x| < 0.625 the odd polynomial x + x³·P(x²), else 1 − 2 / (e^{2|x|} + 1)
 * with x's sign (exp4 above), within a few ulp of float32. NaN stays NaN, ±∞ gives ±1, −0 gives −0. The expression
 * program's tanh (a soft-capped score) runs on it: a float64 tanh per lane cost more than the rest of the tile.
 */
@inline export function tanh4(x: v128): v128 {
  const ax = f32x4.abs(x);
  const z = f32x4.mul(x, x);
  let p = madd(f32x4.splat(-5.70498872745e-3), z, f32x4.splat(2.06390887954e-2));
  p = madd(p, z, f32x4.splat(-5.37397155531e-2));
  p = madd(p, z, f32x4.splat(1.33314422036e-1));
  p = madd(p, z, f32x4.splat(-3.33332819422e-1));
  const small = madd(f32x4.mul(x, z), p, x);
  // A soft-capped score (tanh(s / 50)) is nearly always in the polynomial's range: then no exp at all.
  const isSmall = f32x4.lt(ax, f32x4.splat(0.625));
  if (i32x4.all_true(isSmall)) return small;
  const one = f32x4.splat(1);
  const e = exp4(f32x4.add(ax, ax));
  const big = v128.or(f32x4.sub(one, f32x4.div(f32x4.splat(2), f32x4.add(e, one))), v128.and(x, i32x4.splat(0x80000000)));
  return v128.bitselect(small, big, isSmall);
}
