// adam-step: Adam's parameter update (torch.optim.Adam; AdamW with `decoupled`), elementwise in float64 and stored as
// float32: p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t) + eps), p = param (· (1 − lr · weightDecay) with
// `decoupled`). The step t is an input (one float, read here), so the graph stays the same from step to step.
import { checkLrScaleValue, checkOptimizerStepValue, type AdamStepAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, requireInputs, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * The update elementwise in float64 (β^t too), stored as float32.
 * @param param [...], any strides
 * @param m [...] (param's shape), the first moment after this step's update; any strides
 * @param v [...] (param's shape), the second moment after this step's update; any strides
 * @param t the step, an integer >= 1 (checked by the caller)
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function adamStepImpl(
  param: StridedView,
  m: StridedView,
  v: StridedView,
  t: number,
  a: AdamStepAttrs,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [pRows, mRows, vRows], [ps, ms, vs], [pd, md, vd]] = planRows(part, param, m, v);
  const stepSize = a.lr / (1 - a.beta1 ** t);
  const bc2Sqrt = Math.sqrt(1 - a.beta2 ** t);
  const decay = a.decoupled ? 1 - a.lr * a.weightDecay : 1;
  const eps = a.eps;
  const y = out ?? new Float32Array(sizeOf(param.shape));
  for (let r = 0; r < pRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = pRows[r]!, q = mRows[r]!, w = vRows[r]!; j < n; j++, p += ps, q += ms, w += vs) {
      y[o + j] = pd[p]! * decay - (stepSize * md[q]!) / (Math.sqrt(vd[w]!) / bc2Sqrt + eps);
    }
  }
  return y;
}

/**
 * Inputs: param [...], m [...], v [...], step [] or [1] (t, 1 for the first step), lrScale [] or [1] (optional, this
 * step's factor on lr); attrs { lr, beta1, beta2, eps,
 * weightDecay, decoupled } → param's shape.
 */
export const adamStepKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [param, m, v, step] = requireInputs(call, "param", "m", "v", "step");
  const lrScale = optionalInput(call, 4, "lrScale");
  const attrs = attrsOf<AdamStepAttrs>(call);
  const t = checkOptimizerStepValue(call, step.data[step.offset] ?? NaN);
  // A schedule scales lr wherever it appears, the decoupled decay included (torch reads group["lr"] for both).
  const a = lrScale ? { ...attrs, lr: attrs.lr * checkLrScaleValue(call, lrScale.data[lrScale.offset] ?? NaN) } : attrs;
  return writeRows(call, chunkWork, param.shape, ADAM_STEP_WORK, (y, part) => adamStepImpl(param, m, v, t, a, y, part));
});

/** Work per element in multiply-adds of the matmul core: three strided reads, a sqrt and a division (≈ 15). */
const ADAM_STEP_WORK = 15;
