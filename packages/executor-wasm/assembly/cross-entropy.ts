// cross-entropy per position: logsumexp(row) − row[target] in float64, stable (the row max is subtracted before exp).
// A NaN anywhere in a counted row, or a +∞ (∞ − ∞), makes its loss NaN, as IEEE arithmetic does; a position whose
// target is the ignore index is skipped (loss 0) without reading its row. The host checked every other target against
// [0, V) (findBadIndex); the check here only turns a broken promise into a trap.
import { elementAt, descDim, descStride, rowBase } from "./strided";

/**
 * crossEntropy's and crossEntropyGrad's targets and gradient scaling, a block written field by field by name on the
 * host (src/kernels/cross-entropy.ts, writeTargets: `div` a float64 at 0, then the rest 4 bytes each in this order;
 * a test holds the offsets to the compiler's): the targets (descriptor tdesc), the ignored index and whether
 * there is one (0 or 1), and for the gradient only the incoming gradient (address, element stride) and its divisor.
 */
@unmanaged export class TargetParams {
  div: f64;
  targets: usize; tdesc: usize; ignore: i32; hasIgnore: i32;
  grad: usize; gstride: i32;
}

/**
 * Rows [r0, r1) of logits [N, V] (any view: descriptor `desc`) against targets [N] (int32, any view: `tdesc`): each
 * row's loss is written to dst (float32, dense [N]) unless dst is 0, and added in order to `acc`, which is returned.
 * Chunks pass the running sum on, so a chunked call adds the same numbers in the same order as one call.
 */
export function crossEntropy(logits: usize, desc: usize, p: TargetParams, dst: usize, r0: i32, r1: i32, acc: f64): f64 {
  const targets = p.targets, tdesc = p.tdesc, ignore = p.ignore, hasIgnore = p.hasIgnore != 0;
  const nv = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  for (let r = r0; r < r1; r++) {
    const t = load<i32>(elementAt(tdesc, targets, r));
    let loss: f64 = 0;
    if (!(hasIgnore && t == ignore)) {
      if (<u32>t >= <u32>nv) unreachable();
      const p = rowBase(desc, logits, r);
      const mx = rowMax(p, step, nv);
      let sum: f64 = 0;
      let q = p;
      for (let j: i32 = 0; j < nv; j++, q += step) sum += Math.exp(<f64>load<f32>(q) - mx);
      loss = Math.log(sum) + mx - <f64>load<f32>(p + <usize>t * step);
    }
    if (dst != 0) store<f32>(dst + (<usize>r << 2), <f32>loss);
    acc += loss;
  }
  return acc;
}

/** The largest of the nv float32 values at p, `step` bytes apart, in float64 (f64.max: a NaN wins). */
@inline export function rowMax(p: usize, step: usize, nv: i32): f64 {
  let mx: f64 = -Infinity;
  let q = p;
  for (let j: i32 = 0; j < nv; j++, q += step) mx = max(mx, <f64>load<f32>(q));
  return mx;
}
