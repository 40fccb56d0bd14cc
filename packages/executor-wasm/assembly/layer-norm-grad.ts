// Backward of layer norm, each row's statistics recomputed from x exactly as the forward kernel computes them (float64,
// two-pass: the mean, then the biased variance; rstd = 1/sqrt(σ² + eps)), x̂ = (x − mean)·rstd:
// - layerNormGrad: with ĝ = grad ⊙ weight (weight absent = 1), dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)).
// - layerNormWeightGrad: Σ over rows of grad ⊙ x̂, into float64 accumulators the host keeps across chunks of rows.
// Everything float64; f64x2 lanes where the rows (and the weight) are contiguous.
import { AffineParams, lanes, promoteHigh, promoteLow, rowStats } from "./layer-norm";
import { demote2 } from "./softmax-grad";
import { normGradRows } from "./norm-grad-rows";
import { at } from "./strided";

/**
 * Rows [r0, r1) of grad and x (any views, descriptors `gdesc` and `xdesc`, rows of E) → the same rows of dst, dense.
 * w: the weight [E] with element stride ws, 0 when absent.
 */
export function layerNormGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, p: AffineParams, dst: usize, r0: i32, r1: i32): void {
  normGradRows<LayerNorm>(g, gdesc, x, xdesc, p.eps, r0, r1, p.w, p.ws, dst, false);
}

/**
 * Rows [r0, r1) of grad and x (descriptors as for layerNormGrad): acc[j] (float64, E of them) += grad[r, j] · x̂[r, j].
 * The host zeroes acc first and rounds it into the output last (f64ToF32), so chunks of rows add in order.
 */
export function layerNormWeightGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, acc: usize, eps: f64, r0: i32, r1: i32): void {
  normGradRows<LayerNorm>(g, gdesc, x, xdesc, eps, r0, r1, 0, 0, acc, true);
}

/** The layer norm's rows for normGradRows. */
@final @unmanaged class LayerNorm {
  /** The forward's own statistics (rowStats: lanes where x is contiguous). */
  @inline stats(px: usize, xs: i32, n: i32, eps: f64): void {
    rowStats(px, xs, xs == 1, n, eps);
  }

  /** One row of dx → o (n elements, dense). */
  @inline gradRow(pg: usize, gs: i32, px: usize, xs: i32, w: usize, ws: i32, o: usize, n4: i32, n: i32, mean: f64, rstd: f64): void {
    const inv = 1 / <f64>n;
    const m2 = f64x2.splat(mean);
    const r2 = f64x2.splat(rstd);
    // Σ ĝ and Σ ĝ ⊙ x̂.
    let g0 = f64x2.splat(0), g1 = f64x2.splat(0), h0 = f64x2.splat(0), h1 = f64x2.splat(0);
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      const vx = v128.load(px + k);
      const vg = v128.load(pg + k);
      const vw = w == 0 ? f32x4.splat(1) : v128.load(w + k);
      const gh0 = f64x2.mul(promoteLow(vg), promoteLow(vw));
      const gh1 = f64x2.mul(promoteHigh(vg), promoteHigh(vw));
      g0 = f64x2.add(g0, gh0);
      g1 = f64x2.add(g1, gh1);
      h0 = f64x2.add(h0, f64x2.mul(gh0, f64x2.mul(f64x2.sub(promoteLow(vx), m2), r2)));
      h1 = f64x2.add(h1, f64x2.mul(gh1, f64x2.mul(f64x2.sub(promoteHigh(vx), m2), r2)));
    }
    let mg = lanes(g0, g1);
    let mgx = lanes(h0, h1);
    for (; j < n; j++) {
      const gh = <f64>load<f32>(at(pg, j * gs)) * (w == 0 ? 1 : <f64>load<f32>(at(w, j * ws)));
      mg += gh;
      mgx += gh * ((<f64>load<f32>(at(px, j * xs)) - mean) * rstd);
    }
    mg *= inv;
    mgx *= inv;
    const mg2 = f64x2.splat(mg);
    const mgx2 = f64x2.splat(mgx);
    for (j = 0; j < n4; j += 4) {
      const k = <usize>j << 2;
      const vx = v128.load(px + k);
      const vg = v128.load(pg + k);
      const vw = w == 0 ? f32x4.splat(1) : v128.load(w + k);
      const xh0 = f64x2.mul(f64x2.sub(promoteLow(vx), m2), r2);
      const xh1 = f64x2.mul(f64x2.sub(promoteHigh(vx), m2), r2);
      const y0 = f64x2.mul(r2, f64x2.sub(f64x2.sub(f64x2.mul(promoteLow(vg), promoteLow(vw)), mg2), f64x2.mul(xh0, mgx2)));
      const y1 = f64x2.mul(r2, f64x2.sub(f64x2.sub(f64x2.mul(promoteHigh(vg), promoteHigh(vw)), mg2), f64x2.mul(xh1, mgx2)));
      v128.store(o + k, demote2(y0, y1));
    }
    for (; j < n; j++) {
      const gh = <f64>load<f32>(at(pg, j * gs)) * (w == 0 ? 1 : <f64>load<f32>(at(w, j * ws)));
      const xh = (<f64>load<f32>(at(px, j * xs)) - mean) * rstd;
      store<f32>(o + (<usize>j << 2), <f32>(rstd * (gh - mg - xh * mgx)));
    }
  }

  /** One row's grad ⊙ x̂ added into the n float64 accumulators at acc. */
  @inline weightGradRow(pg: usize, gs: i32, px: usize, xs: i32, acc: usize, n4: i32, n: i32, mean: f64, rstd: f64): void {
    const m2 = f64x2.splat(mean);
    const r2 = f64x2.splat(rstd);
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      const a = acc + (<usize>j << 3);
      const vx = v128.load(px + k);
      const vg = v128.load(pg + k);
      v128.store(a, f64x2.add(v128.load(a), f64x2.mul(promoteLow(vg), f64x2.mul(f64x2.sub(promoteLow(vx), m2), r2))));
      v128.store(a, f64x2.add(v128.load(a, 16), f64x2.mul(promoteHigh(vg), f64x2.mul(f64x2.sub(promoteHigh(vx), m2), r2))), 16);
    }
    for (; j < n; j++) {
      const a = acc + (<usize>j << 3);
      store<f64>(a, load<f64>(a) + <f64>load<f32>(at(pg, j * gs)) * ((<f64>load<f32>(at(px, j * xs)) - mean) * rstd));
    }
  }
}

/** n float64 values at src rounded into n float32 values at dst. */
export function f64ToF32(src: usize, dst: usize, n: i32): void {
  for (let j: i32 = 0; j < n; j++) store<f32>(dst + (<usize>j << 2), <f32>load<f64>(src + (<usize>j << 3)));
}
