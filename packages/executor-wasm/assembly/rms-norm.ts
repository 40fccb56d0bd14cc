// RMS norm over the last axis (LlamaRMSNorm) and its two gradients, in float64: r = 1/sqrt(mean(x²) + eps) per row,
// y = x · r · w; dx = r · (ĝ − x · r² · mean(ĝ ⊙ x)), ĝ = grad ⊙ w; dw += grad ⊙ x · r. Scalar loops: the row
// reduction dominates and is one pass, and float64 throughout makes both module flavours give the same bits.
import { AffineParams } from "./layer-norm";
import { at, descDim, descStride, rowBase } from "./strided";

/** 1/sqrt(mean(x²) + eps) of the n elements at p, `s` elements apart. */
@inline function rmsOf(p: usize, s: i32, n: i32, eps: f64): f64 {
  let sq: f64 = 0;
  for (let j: i32 = 0; j < n; j++) {
    const v = <f64>load<f32>(at(p, j * s));
    sq += v * v;
  }
  return 1 / Math.sqrt(sq / <f64>n + eps);
}

/** The weight's element j, or 1 when there is none (w = 0). */
@inline function weightAt(w: usize, ws: i32, j: i32): f64 {
  return w == 0 ? 1 : <f64>load<f32>(at(w, j * ws));
}

/**
 * Rows [r0, r1) of src (any view, descriptor `desc`) → the same rows of dst, dense. w: weight [E] with element stride
 * ws, 0 when absent. dst may be src's own dense memory: a row is read whole before its first element is written.
 */
export function rmsNorm(src: usize, desc: usize, dst: usize, w: usize, ws: i32, eps: f64, r0: i32, r1: i32): void {
  const n = descDim(desc, 5);
  const s = descStride(desc, 5);
  for (let r = r0; r < r1; r++) {
    const p = rowBase(desc, src, r);
    const inv = rmsOf(p, s, n, eps);
    const o = dst + ((<usize>r * <usize>n) << 2);
    for (let j: i32 = 0; j < n; j++) store<f32>(o + (<usize>j << 2), <f32>(<f64>load<f32>(at(p, j * s)) * inv * weightAt(w, ws, j)));
  }
}

/** Rows [r0, r1) of dx from grad and x (any views) → dst dense. w as rmsNorm's. */
export function rmsNormGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, p: AffineParams, dst: usize, r0: i32, r1: i32): void {
  const w = p.w, ws = p.ws, eps = p.eps;
  const n = descDim(xdesc, 5);
  const xs = descStride(xdesc, 5);
  const gs = descStride(gdesc, 5);
  for (let r = r0; r < r1; r++) {
    const px = rowBase(xdesc, x, r);
    const pg = rowBase(gdesc, g, r);
    const inv = rmsOf(px, xs, n, eps);
    let dot: f64 = 0;
    for (let j: i32 = 0; j < n; j++) dot += <f64>load<f32>(at(pg, j * gs)) * weightAt(w, ws, j) * <f64>load<f32>(at(px, j * xs));
    const c = (dot / <f64>n) * inv * inv;
    const o = dst + ((<usize>r * <usize>n) << 2);
    for (let j: i32 = 0; j < n; j++) {
      const v = inv * (<f64>load<f32>(at(pg, j * gs)) * weightAt(w, ws, j) - <f64>load<f32>(at(px, j * xs)) * c);
      store<f32>(o + (<usize>j << 2), <f32>v);
    }
  }
}

/** Adds grad ⊙ x · r of rows [r0, r1), in order, into the float64 accumulators acc [E]. */
export function rmsNormWeightGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, acc: usize, eps: f64, r0: i32, r1: i32): void {
  const n = descDim(xdesc, 5);
  const xs = descStride(xdesc, 5);
  const gs = descStride(gdesc, 5);
  for (let r = r0; r < r1; r++) {
    const px = rowBase(xdesc, x, r);
    const pg = rowBase(gdesc, g, r);
    const inv = rmsOf(px, xs, n, eps);
    for (let j: i32 = 0; j < n; j++) {
      const a = acc + (<usize>j << 3);
      store<f64>(a, load<f64>(a) + <f64>load<f32>(at(pg, j * gs)) * (<f64>load<f32>(at(px, j * xs)) * inv));
    }
  }
}
