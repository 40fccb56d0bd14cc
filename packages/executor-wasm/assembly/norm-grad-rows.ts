// The row walk both norms' gradients share (layer-norm-grad.ts, rms-norm.ts), written once: rows [r0, r1) of grad and
// x (any views, descriptors `gdesc` and `xdesc`, rows of E along their last axis), each row handed to the norm's own
// row code. The norm is a type argument N, an @unmanaged class of @inline methods never instantiated (as optim-loops.ts'
// updates), so each export inlines its own row code into its own copy of the loop. What N supplies:
// - stats(px, xs, n, eps): the row's statistics recomputed from x as the forward computes them, into NORM_MEAN and
//   NORM_RSTD (the mean subtracted, 0 for RMS norm, and the factor 1/sqrt(… + eps));
// - gradRow(pg, gs, px, xs, w, ws, o, n4, n, mean, rstd): one row's dx → o (dense), the weight [E] (stride ws) 0 when
//   absent;
// - weightGradRow(pg, gs, px, xs, acc, n4, n, mean, rstd): one row's share of the weight's gradient added into the n
//   float64 accumulators at acc.
// pg/px: the row's first elements, gs/xs their element strides; n4: how many elements go 4 at a time (n & ~3 where x,
// grad and the weight are contiguous, else 0).
import { descDim, descStride, rowBase } from "./strided";

// stats' two results (AssemblyScript returns one value; a global pair written once a row costs nothing).
export let NORM_MEAN: f64 = 0;
export let NORM_RSTD: f64 = 0;

/**
 * dx into dst (dense rows), or with `weight` the weight's gradient into the accumulators at `out`. `weight` is a
 * literal at every call, so the inlined copy keeps only its branch.
 */
@inline export function normGradRows<N>(g: usize, gdesc: usize, x: usize, xdesc: usize, eps: f64, r0: i32, r1: i32, w: usize, ws: i32, out: usize, weight: bool): void {
  const u = changetype<N>(0);
  const n = descDim(xdesc, 5);
  const xs = descStride(xdesc, 5);
  const gs = descStride(gdesc, 5);
  const n4 = xs == 1 && gs == 1 && (w == 0 || ws == 1) ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const px = rowBase(xdesc, x, r);
    const pg = rowBase(gdesc, g, r);
    u.stats(px, xs, n, eps);
    if (weight) u.weightGradRow(pg, gs, px, xs, out, n4, n, NORM_MEAN, NORM_RSTD);
    else u.gradRow(pg, gs, px, xs, w, ws, out + ((<usize>r * <usize>n) << 2), n4, n, NORM_MEAN, NORM_RSTD);
  }
}
