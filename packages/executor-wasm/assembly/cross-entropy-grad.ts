// cross-entropy backward, per position in float64 like the forward kernel: (softmax(row) − onehot(target)) · g, the
// softmax stable (row max subtracted), g = grad / div, where grad is the loss gradient (the scalar's for "mean"/"sum",
// the position's for "none", 1 when absent) and div the count of counted positions ("mean") or 1. A position whose
// target is the ignore index gets a row of 0 without reading its logits. NaN or +∞ in a counted row gives a NaN row, as
// IEEE arithmetic does. The host checked every other target against [0, V) (findBadIndex); the check here only turns a
// broken promise into a trap.
import { TargetParams, rowMax } from "./cross-entropy";
import { at, descDim, descStride, elementAt, rowBase } from "./strided";

/**
 * Rows [r0, r1) of logits [N, V] (any view: descriptor `desc`) against targets [N] (int32, any view: `tdesc`) → the
 * same rows of dst, dense [N, V]. grad: 0 when absent, else the loss gradient of row r at grad + r·gstride elements
 * (gstride 0 for a scalar).
 */
export function crossEntropyGrad(logits: usize, desc: usize, p: TargetParams, dst: usize, r0: i32, r1: i32): void {
  const targets = p.targets, tdesc = p.tdesc, grad = p.grad, gstride = p.gstride, div = p.div, ignore = p.ignore, hasIgnore = p.hasIgnore != 0;
  const nv = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  for (let r = r0; r < r1; r++) {
    const o = dst + ((<usize>r * <usize>nv) << 2);
    const t = load<i32>(elementAt(tdesc, targets, r));
    if (hasIgnore && t == ignore) {
      memory.fill(o, 0, <usize>nv << 2);
      continue;
    }
    if (<u32>t >= <u32>nv) unreachable();
    const g: f64 = (grad == 0 ? 1 : <f64>load<f32>(at(grad, r * gstride))) / div;
    const p = rowBase(desc, logits, r);
    const mx = rowMax(p, step, nv);
    // exp(x − max) once per element, kept (as float32, like the forward softmax) in the output row, then scaled.
    let sum: f64 = 0;
    let q = p;
    for (let j: i32 = 0; j < nv; j++, q += step) {
      const e = Math.exp(<f64>load<f32>(q) - mx);
      sum += e;
      store<f32>(o + (<usize>j << 2), <f32>e);
    }
    const inv: f64 = 1 / sum;
    for (let j: i32 = 0; j < nv; j++) {
      const a = o + (<usize>j << 2);
      const e = <f64>load<f32>(a) * inv;
      store<f32>(a, <f32>((j == t ? e - 1 : e) * g));
    }
  }
}
