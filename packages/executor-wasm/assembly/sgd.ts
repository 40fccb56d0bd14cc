// The optimizer updates of torch.optim.SGD (maximize false), elementwise in float64 (f64x2 lanes, 4 elements at a time
// where the rows are contiguous) and rounded once to float32, so the results equal the CPU executor's:
// - sgdMomentum: with d = grad + wd · param (no param: d = grad), d at the first step (PyTorch's clone: buf not read)
//   and momentum · buf + keep · d after, keep = 1 − dampening (computed by the host).
// - sgdStep: with d = grad + wd · param, param − lr · u, u by `mode`: 0 d (no momentum), 1 buf, 2 d + momentum · buf
//   (Nesterov); mode 1 reads neither grad nor wd.
// Each has a span form (every operand dense: n elements from each address) and a row form (two operands any views,
// descriptors written by the host; the third dense row-major, the host copies it dense first when it is not). Plain
// multiply, add and subtract, so both module flavours give the same bits. dst may be a dense operand itself: each
// element is read before it is written. The loops are optim-loops.ts'; the formulas are here.
import { OptimParams } from "./adam";
import { updateRows, updateSpan } from "./optim-loops";

// ---------------------------------------------------------------------------------------------------- sgd-momentum

/** x buf (read only without `first`), y grad, z param (read only with hasParam); c0 mu, c1 keep, c2 wd; flag: first. */
@final @unmanaged class Momentum {
  @inline readsX(flag: i32, hasParam: bool): bool { return flag == 0; }
  @inline readsY(flag: i32, hasParam: bool): bool { return true; }
  @inline readsZ(flag: i32, hasParam: bool): bool { return hasParam; }

  @inline lane2(b: v128, g: v128, p: v128, mu: v128, keep: v128, wd: v128, unused: v128, flag: i32, hasParam: bool): v128 {
    const d = hasParam ? f64x2.add(g, f64x2.mul(wd, p)) : g;
    return flag != 0 ? d : f64x2.add(f64x2.mul(mu, b), f64x2.mul(keep, d));
  }

  @inline lane1(b: f64, g: f64, p: f64, mu: f64, keep: f64, wd: f64, unused: f64, flag: i32, hasParam: bool): f32 {
    const d = hasParam ? g + wd * p : g;
    return <f32>(flag != 0 ? d : mu * b + keep * d);
  }
}

/** n contiguous elements of buf (read only without `first`), grad and (with hasParam) param → dst. */
export function sgdMomentum(b: usize, g: usize, p: usize, dst: usize, n: i32, h: OptimParams): void {
  updateSpan<Momentum>(b, g, p, dst, n, h.mu, h.keep, h.wd, 0, h.flag, h.hasParam != 0);
}

/**
 * Rows [r0, r1) of buf and grad (any views, descriptors `bdesc` and `gdesc`; buf read only without `first`) and of
 * param (dense row-major, read only with hasParam) → the same rows of dst, dense.
 */
export function sgdMomentumStrided(b: usize, bdesc: usize, g: usize, gdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  updateRows<Momentum>(b, bdesc, g, gdesc, h.extra, dst, r0, r1, h.mu, h.keep, h.wd, 0, h.flag, h.hasParam != 0);
}

// ---------------------------------------------------------------------------------------------------- sgd-step

/**
 * x param, y grad (not read in mode 1), z buf (read in modes 1 and 2); c0 lr, c1 mu, c2 wd; flag: the mode. u = d
 * (mode 0), buf (mode 1) or d + mu · buf (mode 2), d = g + wd · p; then p − lr · u.
 */
@final @unmanaged class Step {
  @inline readsX(mode: i32, hasParam: bool): bool { return true; }
  @inline readsY(mode: i32, hasParam: bool): bool { return mode != 1; }
  @inline readsZ(mode: i32, hasParam: bool): bool { return mode != 0; }

  @inline lane2(p: v128, g: v128, b: v128, lr: v128, mu: v128, wd: v128, unused: v128, mode: i32, hasParam: bool): v128 {
    let u: v128;
    if (mode == 1) u = b;
    else {
      const d = f64x2.add(g, f64x2.mul(wd, p));
      u = mode == 2 ? f64x2.add(d, f64x2.mul(mu, b)) : d;
    }
    return f64x2.sub(p, f64x2.mul(lr, u));
  }

  @inline lane1(p: f64, g: f64, b: f64, lr: f64, mu: f64, wd: f64, unused: f64, mode: i32, hasParam: bool): f32 {
    let u: f64;
    if (mode == 1) u = b;
    else {
      const d = g + wd * p;
      u = mode == 2 ? d + mu * b : d;
    }
    return <f32>(p - lr * u);
  }
}

/** n contiguous elements of param, grad (not read in mode 1) and buf (read in modes 1 and 2) → dst. */
export function sgdStep(p: usize, g: usize, b: usize, dst: usize, n: i32, h: OptimParams): void {
  const lr = h.lr, mu = h.mu, wd = h.wd, mode = h.flag;
  // A literal mode per call, so each inlined copy keeps only its own branch.
  if (mode == 1) updateSpan<Step>(p, g, b, dst, n, lr, mu, wd, 0, 1, false);
  else if (mode == 2) updateSpan<Step>(p, g, b, dst, n, lr, mu, wd, 0, 2, false);
  else updateSpan<Step>(p, g, b, dst, n, lr, mu, wd, 0, 0, false);
}

/**
 * Rows [r0, r1) of param and grad (any views, descriptors `pdesc` and `gdesc`; grad not read in mode 1) and of buf
 * (dense row-major, read in modes 1 and 2) → the same rows of dst, dense.
 */
export function sgdStepStrided(p: usize, pdesc: usize, g: usize, gdesc: usize, dst: usize, h: OptimParams, r0: i32, r1: i32): void {
  const b = h.extra, lr = h.lr, mu = h.mu, wd = h.wd, mode = h.flag;
  if (mode == 1) updateRows<Step>(p, pdesc, g, gdesc, b, dst, r0, r1, lr, mu, wd, 0, 1, false);
  else if (mode == 2) updateRows<Step>(p, pdesc, g, gdesc, b, dst, r0, r1, lr, mu, wd, 0, 2, false);
  else updateRows<Step>(p, pdesc, g, gdesc, b, dst, r0, r1, lr, mu, wd, 0, 0, false);
}
