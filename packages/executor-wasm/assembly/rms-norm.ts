// RMS norm over the last axis (LlamaRMSNorm) and its two gradients, in float64: r = 1/sqrt(mean(x²) + eps) per row,
// y = x · r · w; dx = r · (ĝ − x · r² · mean(ĝ ⊙ x)), ĝ = grad ⊙ w; dw += grad ⊙ x · r. Scalar loops: the row
// reduction dominates and is one pass, and float64 throughout makes both module flavours give the same bits.
import { AffineParams } from "./layer-norm";
import { NORM_MEAN, NORM_RSTD, normGradRows } from "./norm-grad-rows";
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
  normGradRows<RmsNorm>(g, gdesc, x, xdesc, p.eps, r0, r1, p.w, p.ws, dst, false);
}

/** Adds grad ⊙ x · r of rows [r0, r1), in order, into the float64 accumulators acc [E]. */
export function rmsNormWeightGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, acc: usize, eps: f64, r0: i32, r1: i32): void {
  normGradRows<RmsNorm>(g, gdesc, x, xdesc, eps, r0, r1, 0, 0, acc, true);
}

/** The RMS norm's rows for normGradRows: scalar loops (n4 unused), r in NORM_RSTD (nothing subtracted). */
@final @unmanaged class RmsNorm {
  @inline stats(px: usize, xs: i32, n: i32, eps: f64): void {
    NORM_MEAN = 0;
    NORM_RSTD = rmsOf(px, xs, n, eps);
  }

  /** One row of dx → o (n elements, dense). */
  @inline gradRow(pg: usize, gs: i32, px: usize, xs: i32, w: usize, ws: i32, o: usize, n4: i32, n: i32, mean: f64, inv: f64): void {
    let dot: f64 = 0;
    for (let j: i32 = 0; j < n; j++) dot += <f64>load<f32>(at(pg, j * gs)) * weightAt(w, ws, j) * <f64>load<f32>(at(px, j * xs));
    const c = (dot / <f64>n) * inv * inv;
    for (let j: i32 = 0; j < n; j++) {
      const v = inv * (<f64>load<f32>(at(pg, j * gs)) * weightAt(w, ws, j) - <f64>load<f32>(at(px, j * xs)) * c);
      store<f32>(o + (<usize>j << 2), <f32>v);
    }
  }

  /** One row's grad ⊙ x · r added into the n float64 accumulators at acc. */
  @inline weightGradRow(pg: usize, gs: i32, px: usize, xs: i32, acc: usize, n4: i32, n: i32, mean: f64, inv: f64): void {
    for (let j: i32 = 0; j < n; j++) {
      const a = acc + (<usize>j << 3);
      store<f64>(a, load<f64>(a) + <f64>load<f32>(at(pg, j * gs)) * (<f64>load<f32>(at(px, j * xs)) * inv));
    }
  }
}
