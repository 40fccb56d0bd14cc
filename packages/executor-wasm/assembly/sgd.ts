// The optimizer updates of torch.optim.SGD (maximize false), elementwise in float64 (f64x2 lanes, 4 elements at a time
// where the rows are contiguous) and rounded once to float32, so the results equal the CPU executor's:
// - sgdMomentum: with d = grad + wd · param (no param: d = grad), d at the first step (PyTorch's clone: buf not read)
//   and momentum · buf + keep · d after, keep = 1 − dampening (computed by the host).
// - sgdStep: with d = grad + wd · param, param − lr · u, u by `mode`: 0 d (no momentum), 1 buf, 2 d + momentum · buf
//   (Nesterov); mode 1 reads neither grad nor wd.
// Each has a span form (every operand dense: n elements from each address) and a row form (two operands any views,
// descriptors written by the host; the third dense row-major, the host copies it dense first when it is not). Plain
// multiply, add and subtract, so both module flavours give the same bits. dst may be a dense operand itself: each
// element is read before it is written. No StaticArray: every access is a load or store at an address.
import { OptimParams } from "./adam";
import { promoteHigh, promoteLow } from "./layer-norm";
import { demote2 } from "./softmax-grad";
import { at, descDim, descStride, rowBase } from "./strided";

// ---------------------------------------------------------------------------------------------------- sgd-momentum

@inline function momentum2(b: v128, g: v128, p: v128, mu: v128, keep: v128, wd: v128, first: bool, hasParam: bool): v128 {
  const d = hasParam ? f64x2.add(g, f64x2.mul(wd, p)) : g;
  return first ? d : f64x2.add(f64x2.mul(mu, b), f64x2.mul(keep, d));
}

@inline function momentum1(b: f64, g: f64, p: f64, mu: f64, keep: f64, wd: f64, first: bool, hasParam: bool): f32 {
  const d = hasParam ? g + wd * p : g;
  return <f32>(first ? d : mu * b + keep * d);
}

/** 4 elements at contiguous addresses (b read only without `first`, p only with hasParam) → dst. */
@inline function momentum4(b: usize, g: usize, p: usize, dst: usize, mu: v128, keep: v128, wd: v128, first: bool, hasParam: bool): void {
  const vb = first ? f32x4.splat(0) : v128.load(b);
  const vg = v128.load(g);
  const vp = hasParam ? v128.load(p) : f32x4.splat(0);
  const lo = momentum2(promoteLow(vb), promoteLow(vg), promoteLow(vp), mu, keep, wd, first, hasParam);
  const hi = momentum2(promoteHigh(vb), promoteHigh(vg), promoteHigh(vp), mu, keep, wd, first, hasParam);
  v128.store(dst, demote2(lo, hi));
}

/** n contiguous elements of buf (read only without `first`), grad and (with hasParam) param → dst. */
export function sgdMomentum(b: usize, g: usize, p: usize, dst: usize, n: i32, h: OptimParams): void {
  const mu = h.mu, keep = h.keep, wd = h.wd, first = h.flag != 0, hasParam = h.hasParam != 0;
  const m2 = f64x2.splat(mu);
  const k2 = f64x2.splat(keep);
  const w2 = f64x2.splat(wd);
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    momentum4(b + k, g + k, p + k, dst + k, m2, k2, w2, first, hasParam);
  }
  for (; j < n; j++) {
    const k = <usize>j << 2;
    const bv: f64 = first ? 0 : <f64>load<f32>(b + k);
    const pv: f64 = hasParam ? <f64>load<f32>(p + k) : 0;
    store<f32>(dst + k, momentum1(bv, <f64>load<f32>(g + k), pv, mu, keep, wd, first, hasParam));
  }
}

/**
 * Rows [r0, r1) of buf and grad (any views, descriptors `bdesc` and `gdesc`; buf read only without `first`) and of
 * param (dense row-major, read only with hasParam) → the same rows of dst, dense.
 */
export function sgdMomentumStrided(b: usize, bdesc: usize, g: usize, gdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  const p = h.extra, mu = h.mu, keep = h.keep, wd = h.wd, first = h.flag != 0, hasParam = h.hasParam != 0;
  const n = descDim(gdesc, 5);
  const bs = descStride(bdesc, 5);
  const gs = descStride(gdesc, 5);
  const m2 = f64x2.splat(mu);
  const k2 = f64x2.splat(keep);
  const w2 = f64x2.splat(wd);
  const n4 = (first || bs == 1) && gs == 1 ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const pb: usize = first ? 0 : rowBase(bdesc, b, r);
    const pg = rowBase(gdesc, g, r);
    const row = (<usize>r * <usize>n) << 2;
    const pp = p + row;
    const o = dst + row;
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      momentum4(pb + k, pg + k, pp + k, o + k, m2, k2, w2, first, hasParam);
    }
    for (; j < n; j++) {
      const k = <usize>j << 2;
      const bv: f64 = first ? 0 : <f64>load<f32>(at(pb, j * bs));
      const pv: f64 = hasParam ? <f64>load<f32>(pp + k) : 0;
      store<f32>(o + k, momentum1(bv, <f64>load<f32>(at(pg, j * gs)), pv, mu, keep, wd, first, hasParam));
    }
  }
}

// ---------------------------------------------------------------------------------------------------- sgd-step

/** u = d (mode 0), buf (mode 1) or d + mu · buf (mode 2), d = g + wd · p; then p − lr · u. */
@inline function step2(p: v128, g: v128, b: v128, lr: v128, mu: v128, wd: v128, mode: i32): v128 {
  let u: v128;
  if (mode == 1) u = b;
  else {
    const d = f64x2.add(g, f64x2.mul(wd, p));
    u = mode == 2 ? f64x2.add(d, f64x2.mul(mu, b)) : d;
  }
  return f64x2.sub(p, f64x2.mul(lr, u));
}

@inline function step1(p: f64, g: f64, b: f64, lr: f64, mu: f64, wd: f64, mode: i32): f32 {
  let u: f64;
  if (mode == 1) u = b;
  else {
    const d = g + wd * p;
    u = mode == 2 ? d + mu * b : d;
  }
  return <f32>(p - lr * u);
}

/** 4 elements at contiguous addresses (g read only without mode 1, b only with mode 1 or 2) → dst. */
@inline function step4(p: usize, g: usize, b: usize, dst: usize, lr: v128, mu: v128, wd: v128, mode: i32): void {
  const vp = v128.load(p);
  const vg = mode == 1 ? f32x4.splat(0) : v128.load(g);
  const vb = mode == 0 ? f32x4.splat(0) : v128.load(b);
  const lo = step2(promoteLow(vp), promoteLow(vg), promoteLow(vb), lr, mu, wd, mode);
  const hi = step2(promoteHigh(vp), promoteHigh(vg), promoteHigh(vb), lr, mu, wd, mode);
  v128.store(dst, demote2(lo, hi));
}

@inline function stepSpan(p: usize, g: usize, b: usize, dst: usize, n: i32, lr: f64, mu: f64, wd: f64, mode: i32): void {
  const l2 = f64x2.splat(lr);
  const m2 = f64x2.splat(mu);
  const w2 = f64x2.splat(wd);
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    step4(p + k, g + k, b + k, dst + k, l2, m2, w2, mode);
  }
  for (; j < n; j++) {
    const k = <usize>j << 2;
    const gv: f64 = mode == 1 ? 0 : <f64>load<f32>(g + k);
    const bv: f64 = mode == 0 ? 0 : <f64>load<f32>(b + k);
    store<f32>(dst + k, step1(<f64>load<f32>(p + k), gv, bv, lr, mu, wd, mode));
  }
}

/** n contiguous elements of param, grad (not read in mode 1) and buf (read in modes 1 and 2) → dst. */
export function sgdStep(p: usize, g: usize, b: usize, dst: usize, n: i32, h: OptimParams): void {
  const lr = h.lr, mu = h.mu, wd = h.wd, mode = h.flag;
  // A literal mode per call, so each inlined copy keeps only its own branch.
  if (mode == 1) stepSpan(p, g, b, dst, n, lr, mu, wd, 1);
  else if (mode == 2) stepSpan(p, g, b, dst, n, lr, mu, wd, 2);
  else stepSpan(p, g, b, dst, n, lr, mu, wd, 0);
}

@inline function stepRows(p: usize, pdesc: usize, g: usize, gdesc: usize, b: usize, dst: usize, lr: f64, mu: f64, wd: f64, mode: i32, r0: i32, r1: i32): void {
  const n = descDim(pdesc, 5);
  const ps = descStride(pdesc, 5);
  const gs = descStride(gdesc, 5);
  const l2 = f64x2.splat(lr);
  const m2 = f64x2.splat(mu);
  const w2 = f64x2.splat(wd);
  const n4 = ps == 1 && (mode == 1 || gs == 1) ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const pp = rowBase(pdesc, p, r);
    const pg: usize = mode == 1 ? 0 : rowBase(gdesc, g, r);
    const row = (<usize>r * <usize>n) << 2;
    const pb = b + row;
    const o = dst + row;
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const k = <usize>j << 2;
      step4(pp + k, pg + k, pb + k, o + k, l2, m2, w2, mode);
    }
    for (; j < n; j++) {
      const k = <usize>j << 2;
      const gv: f64 = mode == 1 ? 0 : <f64>load<f32>(at(pg, j * gs));
      const bv: f64 = mode == 0 ? 0 : <f64>load<f32>(pb + k);
      store<f32>(o + k, step1(<f64>load<f32>(at(pp, j * ps)), gv, bv, lr, mu, wd, mode));
    }
  }
}

/**
 * Rows [r0, r1) of param and grad (any views, descriptors `pdesc` and `gdesc`; grad not read in mode 1) and of buf
 * (dense row-major, read in modes 1 and 2) → the same rows of dst, dense.
 */
export function sgdStepStrided(p: usize, pdesc: usize, g: usize, gdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  const b = h.extra, lr = h.lr, mu = h.mu, wd = h.wd, mode = h.flag;
  if (mode == 1) stepRows(p, pdesc, g, gdesc, b, dst, lr, mu, wd, 1, r0, r1);
  else if (mode == 2) stepRows(p, pdesc, g, gdesc, b, dst, lr, mu, wd, 2, r0, r1);
  else stepRows(p, pdesc, g, gdesc, b, dst, lr, mu, wd, 0, r0, r1);
}
