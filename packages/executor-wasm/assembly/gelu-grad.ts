// GELU backward, grad · gelu'(x), on 4 float32 lanes with the forward kernel's helpers (gelu.ts: erfc with an exact
// x², the vector exp):
// - "none": Φ(x) + x·φ(x), Φ(x) = ½(1 + erf(x/√2)) taken as the forward takes it (2 − erfc or erfc, no cancellation),
//   φ(x) = exp(−x²/2)/√(2π) with x² split exactly as in erfc.
// - "tanh": with k = √(2/π), u = k(x + 0.044715x³) and s = ½(1 + tanh u) = 1/(1 + exp(−2u)), 1 − tanh²u = 4s(1 − s),
//   so gelu'(x) = s + 2x·s(1 − s)·k(1 + 3·0.044715x²); 1 − s is taken as exp(−2u)·s where s is near 1 (no cancellation).
// ±∞ gives NaN in both forms (as the formulas do in IEEE arithmetic: ∞ · 0); NaN stays NaN. Plain multiply and add, so
// both module flavours give the same bits.
import { exp4 } from "./simd";
import { erfcHalf4, loadSome, splat, storeSome } from "./gelu";
import { descDim, descStride, rowBase } from "./strided";

/** exp(−x²/2), x² split as erfcHalf4 splits it (|x| capped at 20: the value is 0 in float32 long before). */
@inline function expHalfSq4(x: v128): v128 {
  const a = f32x4.pmin(f32x4.abs(x), splat(20));
  const ah = v128.and(a, i32x4.splat(0xfffff000));
  const lo = f32x4.mul(f32x4.sub(a, ah), f32x4.add(a, ah));
  return f32x4.mul(exp4(f32x4.mul(f32x4.mul(ah, ah), splat(-0.5))), exp4(f32x4.mul(lo, splat(-0.5))));
}

@inline function geluErfGrad4(x: v128): v128 {
  const e = erfcHalf4(x);
  const onePlusErf = v128.bitselect(f32x4.sub(splat(2), e), e, f32x4.ge(x, splat(0)));
  const pdf = f32x4.mul(expHalfSq4(x), splat(0.3989422804014327)); // 1/√(2π)
  return f32x4.add(f32x4.mul(splat(0.5), onePlusErf), f32x4.mul(x, pdf));
}

@inline function geluTanhGrad4(x: v128): v128 {
  const x2 = f32x4.mul(x, x);
  const m2u = f32x4.mul(f32x4.add(x, f32x4.mul(splat(0.044715), f32x4.mul(x2, x))), splat(-1.5957691216057308));
  const e = v128.bitselect(splat(Infinity), exp4(m2u), f32x4.gt(m2u, splat(88)));
  const s = f32x4.div(splat(1), f32x4.add(splat(1), e));
  const oneMinusS = v128.bitselect(f32x4.sub(splat(1), s), f32x4.mul(e, s), f32x4.gt(e, splat(1)));
  const slope = f32x4.mul(splat(0.7978845608028654), f32x4.add(splat(1), f32x4.mul(splat(0.134145), x2)));
  return f32x4.add(s, f32x4.mul(f32x4.mul(f32x4.mul(splat(2), x), f32x4.mul(s, oneMinusS)), slope));
}

@inline function geluGrad4(g: v128, x: v128, tanh: bool): v128 {
  const d = tanh ? geluTanhGrad4(x) : geluErfGrad4(x);
  // ±∞ → NaN (∞ · 0 in the formulas), whatever the lanes above made of it.
  const inf = f32x4.eq(f32x4.abs(x), splat(Infinity));
  return f32x4.mul(g, v128.bitselect(splat(NaN), d, inf));
}

/** n contiguous elements of grad and x → dst (dst may be either: each vector is read before it is written). */
export function geluGrad(g: usize, x: usize, dst: usize, n: i32, tanh: bool): void {
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    v128.store(dst + k, geluGrad4(v128.load(g + k), v128.load(x + k), tanh));
  }
  if (j < n) {
    const k = <usize>j << 2;
    storeSome(dst + k, geluGrad4(loadSome(g + k, 4, n - j), loadSome(x + k, 4, n - j), tanh), n - j);
  }
}

/** Rows [r0, r1) of grad and x (any views, descriptors `gdesc` and `xdesc`) → the same rows of dst, dense. */
export function geluGradStrided(g: usize, gdesc: usize, x: usize, xdesc: usize, dst: usize, tanh: bool, r0: i32, r1: i32): void {
  const n = descDim(xdesc, 5);
  const gstep = <usize>(descStride(gdesc, 5) << 2);
  const xstep = <usize>(descStride(xdesc, 5) << 2);
  const n4 = n & ~3;
  for (let r = r0; r < r1; r++) {
    let pg = rowBase(gdesc, g, r);
    let px = rowBase(xdesc, x, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    let j: i32 = 0;
    for (; j < n4; j += 4, pg += gstep << 2, px += xstep << 2) {
      v128.store(o + (<usize>j << 2), geluGrad4(loadSome4(pg, gstep), loadSome4(px, xstep), tanh));
    }
    if (j < n) storeSome(o + (<usize>j << 2), geluGrad4(loadSome(pg, gstep, n - j), loadSome(px, xstep, n - j), tanh), n - j);
  }
}

/** 4 elements from p, `step` bytes apart. */
@inline export function loadSome4(p: usize, step: usize): v128 {
  let v = f32x4.splat(load<f32>(p));
  v = f32x4.replace_lane(v, 1, load<f32>(p + step));
  v = f32x4.replace_lane(v, 2, load<f32>(p + 2 * step));
  return f32x4.replace_lane(v, 3, load<f32>(p + 3 * step));
}
