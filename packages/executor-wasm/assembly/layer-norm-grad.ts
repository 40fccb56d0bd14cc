// Backward of layer norm, each row's statistics recomputed from x exactly as the forward kernel computes them (float64,
// two-pass: the mean, then the biased variance; rstd = 1/sqrt(σ² + eps)), x̂ = (x − mean)·rstd:
// - layerNormGrad: with ĝ = grad ⊙ weight (weight absent = 1), dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)).
// - layerNormWeightGrad: Σ over rows of grad ⊙ x̂, into float64 accumulators the host keeps across chunks of rows.
// Everything float64; f64x2 lanes where the rows (and the weight) are contiguous.
import { AffineParams, lanes, promoteHigh, promoteLow } from "./layer-norm";
import { demote2 } from "./softmax-grad";
import { at, descDim, descStride, rowBase } from "./strided";

let MEAN: f64 = 0;
let RSTD: f64 = 0;

/** MEAN and RSTD of the n elements at p, `s` elements apart (f64x2 lanes when s is 1). */
function stats(p: usize, s: i32, n: i32, eps: f64): void {
  const n4 = s == 1 ? n & ~3 : 0;
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
  MEAN = mean;
  RSTD = 1 / Math.sqrt(ss / <f64>n + eps);
}

/**
 * Rows [r0, r1) of grad and x (any views, descriptors `gdesc` and `xdesc`, rows of E) → the same rows of dst, dense.
 * w: the weight [E] with element stride ws, 0 when absent.
 */
export function layerNormGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, p: AffineParams, dst: usize, r0: i32, r1: i32): void {
  const w = p.w, ws = p.ws, eps = p.eps;
  const n = descDim(xdesc, 5);
  const xs = descStride(xdesc, 5);
  const gs = descStride(gdesc, 5);
  const n4 = xs == 1 && gs == 1 && (w == 0 || ws == 1) ? n & ~3 : 0;
  const inv = 1 / <f64>n;
  for (let r = r0; r < r1; r++) {
    const px = rowBase(xdesc, x, r);
    const pg = rowBase(gdesc, g, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    stats(px, xs, n, eps);
    const mean = MEAN;
    const rstd = RSTD;
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
}

/**
 * Rows [r0, r1) of grad and x (descriptors as for layerNormGrad): acc[j] (float64, E of them) += grad[r, j] · x̂[r, j].
 * The host zeroes acc first and rounds it into the output last (f64ToF32), so chunks of rows add in order.
 */
export function layerNormWeightGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, acc: usize, eps: f64, r0: i32, r1: i32): void {
  const n = descDim(xdesc, 5);
  const xs = descStride(xdesc, 5);
  const gs = descStride(gdesc, 5);
  const n4 = xs == 1 && gs == 1 ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const px = rowBase(xdesc, x, r);
    const pg = rowBase(gdesc, g, r);
    stats(px, xs, n, eps);
    const mean = MEAN;
    const rstd = RSTD;
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
