// The optimizer updates of torch.optim.Adam (AdamW with `decoupled`), elementwise in float64 (f64x2 lanes, 4 elements
// at a time where the rows are contiguous) and rounded once to float32, so the results equal the CPU executor's:
// - adamMoment: with g = grad + wd · param (no param: g = grad), beta · state + (1 − beta) · g, or · g² with `square`.
// - adamStep: p = param (· (1 − lr · wd) with `decoupled`), then p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t)
//   + eps); β^t is Math.pow in float64 (0^t = 0).
// Each has a span form (every operand dense: n elements from each address) and a row form (two operands any views,
// descriptors written by the host; the third dense row-major, the host copies it dense first when it is not). Plain
// multiply, add, divide and sqrt, so both module flavours give the same bits. dst may be a dense operand itself: each
// element is read before it is written. The loops are optim-loops.ts'; the formulas are here.
import { updateRows, updateSpan } from "./optim-loops";

/**
 * The optimizers' numbers (adam.ts, sgd.ts), one block written field by field by name on the host
 * (src/kernels/optim-params.ts, writeOptim: the float64 fields first, 8 bytes each, then `extra`, `flag` and
 * `hasParam`, 4 bytes each; a test holds the offsets to the compiler's). Each kernel reads its own fields:
 * adamMoment beta, wd, flag (square), hasParam; adamStep t, lr, beta1, beta2, eps, wd, flag (decoupled); sgdMomentum
 * mu, keep, wd, flag (first), hasParam; sgdStep lr, mu, wd, flag (mode). `extra`: the strided variants' third tensor
 * (adamMomentStrided and sgdMomentumStrided: the parameter p; adamStepStrided: v; sgdStepStrided: the momentum b).
 */
@unmanaged export class OptimParams {
  beta: f64; wd: f64; t: f64; lr: f64; beta1: f64; beta2: f64; eps: f64; mu: f64; keep: f64;
  extra: usize; flag: i32; hasParam: i32;
}

// ---------------------------------------------------------------------------------------------------- adam-moment

/** x state, y grad, z param (read only with hasParam); c0 beta, c1 1 − beta, c2 wd; flag: square. */
@final @unmanaged class Moment {
  @inline readsX(flag: i32, hasParam: bool): bool { return true; }
  @inline readsY(flag: i32, hasParam: bool): bool { return true; }
  @inline readsZ(flag: i32, hasParam: bool): bool { return hasParam; }

  @inline lane2(s: v128, g: v128, p: v128, beta: v128, keep: v128, wd: v128, unused: v128, flag: i32, hasParam: bool): v128 {
    const gw = hasParam ? f64x2.add(g, f64x2.mul(wd, p)) : g;
    const u = flag != 0 ? f64x2.mul(gw, gw) : gw;
    return f64x2.add(f64x2.mul(beta, s), f64x2.mul(keep, u));
  }

  @inline lane1(s: f64, g: f64, p: f64, beta: f64, keep: f64, wd: f64, unused: f64, flag: i32, hasParam: bool): f32 {
    const gw = hasParam ? g + wd * p : g;
    return <f32>(beta * s + keep * (flag != 0 ? gw * gw : gw));
  }
}

/** n contiguous elements of state, grad and (with hasParam) param → dst. */
export function adamMoment(s: usize, g: usize, p: usize, dst: usize, n: i32, h: OptimParams): void {
  updateSpan<Moment>(s, g, p, dst, n, h.beta, 1 - h.beta, h.wd, 0, h.flag, h.hasParam != 0);
}

/**
 * Rows [r0, r1) of state and grad (any views, descriptors `sdesc` and `gdesc`) and of param (dense row-major, read
 * only with hasParam) → the same rows of dst, dense.
 */
export function adamMomentStrided(s: usize, sdesc: usize, g: usize, gdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  updateRows<Moment>(s, sdesc, g, gdesc, h.extra, dst, r0, r1, h.beta, 1 - h.beta, h.wd, 0, h.flag, h.hasParam != 0);
}

// ---------------------------------------------------------------------------------------------------- adam-step

/** lr / (1 − β1^t): the step size, bias-corrected. */
@inline function stepSize(h: OptimParams): f64 {
  return h.lr / (1 - Math.pow(h.beta1, h.t));
}

/** sqrt(1 − β2^t): v's bias correction, applied to sqrt(v). */
@inline function bc2Sqrt(h: OptimParams): f64 {
  return Math.sqrt(1 - Math.pow(h.beta2, h.t));
}

/** 1 − lr · wd with `decoupled` (AdamW's decay of the parameter), else 1. */
@inline function decay(h: OptimParams): f64 {
  return h.flag != 0 ? 1 - h.lr * h.wd : 1;
}

/** x param, y m, z v; c0 the step size, c1 sqrt(1 − β2^t), c2 eps, c3 the decay. */
@final @unmanaged class Step {
  @inline readsX(flag: i32, hasParam: bool): bool { return true; }
  @inline readsY(flag: i32, hasParam: bool): bool { return true; }
  @inline readsZ(flag: i32, hasParam: bool): bool { return true; }

  @inline lane2(p: v128, m: v128, v: v128, size: v128, bc2: v128, eps: v128, decay: v128, flag: i32, hasParam: bool): v128 {
    const denom = f64x2.add(f64x2.div(f64x2.sqrt(v), bc2), eps);
    return f64x2.sub(f64x2.mul(p, decay), f64x2.div(f64x2.mul(size, m), denom));
  }

  @inline lane1(p: f64, m: f64, v: f64, size: f64, bc2: f64, eps: f64, decay: f64, flag: i32, hasParam: bool): f32 {
    return <f32>(p * decay - (size * m) / (Math.sqrt(v) / bc2 + eps));
  }
}

/** n contiguous elements of param, m and v → dst; t the step (an integer >= 1, checked by the host). */
export function adamStep(p: usize, m: usize, v: usize, dst: usize, n: i32, h: OptimParams): void {
  updateSpan<Step>(p, m, v, dst, n, stepSize(h), bc2Sqrt(h), h.eps, decay(h), 0, false);
}

/**
 * Rows [r0, r1) of param and m (any views, descriptors `pdesc` and `mdesc`) and of v (dense row-major) → the same rows
 * of dst, dense.
 */
export function adamStepStrided(p: usize, pdesc: usize, m: usize, mdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  updateRows<Step>(p, pdesc, m, mdesc, h.extra, dst, r0, r1, stepSize(h), bc2Sqrt(h), h.eps, decay(h), 0, false);
}
