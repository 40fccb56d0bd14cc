// The optimizer updates of torch.optim.Adam (AdamW with `decoupled`), elementwise in float64 (f64x2 lanes, 4 elements
// at a time where the rows are contiguous) and rounded once to float32, so the results equal the CPU executor's:
// - adamMoment: with g = grad + wd · param (no param: g = grad), beta · state + (1 − beta) · g, or · g² with `square`.
// - adamStep: p = param (· (1 − lr · wd) with `decoupled`), then p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t)
//   + eps); β^t is Math.pow in float64 (0^t = 0).
// Each has a span form (every operand dense: n elements from each address) and a row form (two operands any views,
// descriptors written by the host; the third dense row-major, the host copies it dense first when it is not). Plain
// multiply, add, divide and sqrt, so both module flavours give the same bits. dst may be a dense operand itself: each
// element is read before it is written.
import { promoteHigh, promoteLow } from "./layer-norm";

/**
 * The optimizers' numbers (adam.ts, sgd.ts), one block written field by field by name on the host
 * (src/kernels/optim-params.ts, writeOptim: the float64 fields first, 8 bytes each, then `extra`, `flag` and
 * `hasParam`, 4 bytes each; `optimParamsLayout` reports the offsets for a test). Each kernel reads its own fields:
 * adamMoment beta, wd, flag (square), hasParam; adamStep t, lr, beta1, beta2, eps, wd, flag (decoupled); sgdMomentum
 * mu, keep, wd, flag (first), hasParam; sgdStep lr, mu, wd, flag (mode). `extra`: the strided variants' third tensor
 * (adamMomentStrided and sgdMomentumStrided: the parameter p; adamStepStrided: v; sgdStepStrided: the momentum b).
 */
@unmanaged export class OptimParams {
  beta: f64; wd: f64; t: f64; lr: f64; beta1: f64; beta2: f64; eps: f64; mu: f64; keep: f64;
  extra: usize; flag: i32; hasParam: i32;
}

/** Writes OptimParams' field offsets in declaration order (i32 each) at dst; returns their count. */
export function optimParamsLayout(dst: usize): i32 {
  let n: usize = 0;
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("beta"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("wd"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("t"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("lr"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("beta1"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("beta2"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("eps"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("mu"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("keep"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("extra"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("flag"));
  store<i32>(dst + (n++ << 2), offsetof<OptimParams>("hasParam"));
  return <i32>n;
}
import { demote2 } from "./softmax-grad";
import { at, descDim, descStride, rowBase } from "./strided";

// ---------------------------------------------------------------------------------------------------- adam-moment

@inline function moment2(s: v128, g: v128, p: v128, beta: v128, keep: v128, wd: v128, square: bool, hasParam: bool): v128 {
  const gw = hasParam ? f64x2.add(g, f64x2.mul(wd, p)) : g;
  const u = square ? f64x2.mul(gw, gw) : gw;
  return f64x2.add(f64x2.mul(beta, s), f64x2.mul(keep, u));
}

@inline function moment1(s: f64, g: f64, p: f64, beta: f64, keep: f64, wd: f64, square: bool, hasParam: bool): f32 {
  const gw = hasParam ? g + wd * p : g;
  return <f32>(beta * s + keep * (square ? gw * gw : gw));
}

/** 4 elements at contiguous addresses (p read only with hasParam) → dst. */
@inline function moment4(s: usize, g: usize, p: usize, dst: usize, beta: v128, keep: v128, wd: v128, square: bool, hasParam: bool): void {
  const vs = v128.load(s);
  const vg = v128.load(g);
  const vp = hasParam ? v128.load(p) : f32x4.splat(0);
  const lo = moment2(promoteLow(vs), promoteLow(vg), promoteLow(vp), beta, keep, wd, square, hasParam);
  const hi = moment2(promoteHigh(vs), promoteHigh(vg), promoteHigh(vp), beta, keep, wd, square, hasParam);
  v128.store(dst, demote2(lo, hi));
}

/** n contiguous elements of state, grad and (with hasParam) param → dst. */
export function adamMoment(s: usize, g: usize, p: usize, dst: usize, n: i32, h: OptimParams): void {
  const beta = h.beta, wd = h.wd, square = h.flag != 0, hasParam = h.hasParam != 0;
  const keep = 1 - beta;
  const b2 = f64x2.splat(beta);
  const k2 = f64x2.splat(keep);
  const w2 = f64x2.splat(wd);
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    moment4(s + k, g + k, p + k, dst + k, b2, k2, w2, square, hasParam);
  }
  for (; j < n; j++) {
    const k = <usize>j << 2;
    const pv: f64 = hasParam ? <f64>load<f32>(p + k) : 0;
    store<f32>(dst + k, moment1(<f64>load<f32>(s + k), <f64>load<f32>(g + k), pv, beta, keep, wd, square, hasParam));
  }
}

/**
 * Rows [r0, r1) of state and grad (any views, descriptors `sdesc` and `gdesc`) and of param (dense row-major, read
 * only with hasParam) → the same rows of dst, dense.
 */
export function adamMomentStrided(s: usize, sdesc: usize, g: usize, gdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  const p = h.extra, beta = h.beta, wd = h.wd, square = h.flag != 0, hasParam = h.hasParam != 0;
  const n = descDim(sdesc, 5);
  const ss = descStride(sdesc, 5);
  const gs = descStride(gdesc, 5);
  const keep = 1 - beta;
  const b2 = f64x2.splat(beta);
  const k2 = f64x2.splat(keep);
  const w2 = f64x2.splat(wd);
  const n4 = ss == 1 && gs == 1 ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const ps = rowBase(sdesc, s, r);
    const pg = rowBase(gdesc, g, r);
    const row = (<usize>r * <usize>n) << 2;
    const pp = p + row;
    const o = dst + row;
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      moment4(ps + k, pg + k, pp + k, o + k, b2, k2, w2, square, hasParam);
    }
    for (; j < n; j++) {
      const k = <usize>j << 2;
      const pv: f64 = hasParam ? <f64>load<f32>(pp + k) : 0;
      store<f32>(o + k, moment1(<f64>load<f32>(at(ps, j * ss)), <f64>load<f32>(at(pg, j * gs)), pv, beta, keep, wd, square, hasParam));
    }
  }
}

// ---------------------------------------------------------------------------------------------------- adam-step

/** lr / (1 − β1^t): the step size, bias-corrected. */
@inline function stepSize(lr: f64, beta1: f64, t: f64): f64 {
  return lr / (1 - Math.pow(beta1, t));
}

/** sqrt(1 − β2^t): v's bias correction, applied to sqrt(v). */
@inline function bc2Sqrt(beta2: f64, t: f64): f64 {
  return Math.sqrt(1 - Math.pow(beta2, t));
}

@inline function step2(p: v128, m: v128, v: v128, size: v128, bc2: v128, eps: v128, decay: v128): v128 {
  const denom = f64x2.add(f64x2.div(f64x2.sqrt(v), bc2), eps);
  return f64x2.sub(f64x2.mul(p, decay), f64x2.div(f64x2.mul(size, m), denom));
}

@inline function step1(p: f64, m: f64, v: f64, size: f64, bc2: f64, eps: f64, decay: f64): f32 {
  return <f32>(p * decay - (size * m) / (Math.sqrt(v) / bc2 + eps));
}

/** 4 elements at contiguous addresses → dst. */
@inline function step4(p: usize, m: usize, v: usize, dst: usize, size: v128, bc2: v128, eps: v128, decay: v128): void {
  const vp = v128.load(p);
  const vm = v128.load(m);
  const vv = v128.load(v);
  const lo = step2(promoteLow(vp), promoteLow(vm), promoteLow(vv), size, bc2, eps, decay);
  const hi = step2(promoteHigh(vp), promoteHigh(vm), promoteHigh(vv), size, bc2, eps, decay);
  v128.store(dst, demote2(lo, hi));
}

/** n contiguous elements of param, m and v → dst; t the step (an integer >= 1, checked by the host). */
export function adamStep(p: usize, m: usize, v: usize, dst: usize, n: i32, h: OptimParams): void {
  const t = h.t, lr = h.lr, beta1 = h.beta1, beta2 = h.beta2, eps = h.eps, wd = h.wd, decoupled = h.flag != 0;
  const size = stepSize(lr, beta1, t);
  const bc2 = bc2Sqrt(beta2, t);
  const decay: f64 = decoupled ? 1 - lr * wd : 1;
  const s2 = f64x2.splat(size);
  const c2 = f64x2.splat(bc2);
  const e2 = f64x2.splat(eps);
  const d2 = f64x2.splat(decay);
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    step4(p + k, m + k, v + k, dst + k, s2, c2, e2, d2);
  }
  for (; j < n; j++) {
    const k = <usize>j << 2;
    store<f32>(dst + k, step1(<f64>load<f32>(p + k), <f64>load<f32>(m + k), <f64>load<f32>(v + k), size, bc2, eps, decay));
  }
}

/**
 * Rows [r0, r1) of param and m (any views, descriptors `pdesc` and `mdesc`) and of v (dense row-major) → the same rows
 * of dst, dense.
 */
export function adamStepStrided(p: usize, pdesc: usize, m: usize, mdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  const v = h.extra, t = h.t, lr = h.lr, beta1 = h.beta1, beta2 = h.beta2, eps = h.eps, wd = h.wd, decoupled = h.flag != 0;
  const n = descDim(pdesc, 5);
  const ps = descStride(pdesc, 5);
  const ms = descStride(mdesc, 5);
  const size = stepSize(lr, beta1, t);
  const bc2 = bc2Sqrt(beta2, t);
  const decay: f64 = decoupled ? 1 - lr * wd : 1;
  const s2 = f64x2.splat(size);
  const c2 = f64x2.splat(bc2);
  const e2 = f64x2.splat(eps);
  const d2 = f64x2.splat(decay);
  const n4 = ps == 1 && ms == 1 ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const pp = rowBase(pdesc, p, r);
    const pm = rowBase(mdesc, m, r);
    const row = (<usize>r * <usize>n) << 2;
    const pv = v + row;
    const o = dst + row;
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      step4(pp + k, pm + k, pv + k, o + k, s2, c2, e2, d2);
    }
    for (; j < n; j++) {
      const k = <usize>j << 2;
      store<f32>(o + k, step1(<f64>load<f32>(at(pp, j * ps)), <f64>load<f32>(at(pm, j * ms)), <f64>load<f32>(pv + k), size, bc2, eps, decay));
    }
  }
}
