// adam-step: Adam's parameter update (torch.optim.Adam; AdamW with `decoupled`), elementwise in float64 and stored as
// float32: p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t) + eps), p = param (· (1 − lr · weightDecay) with
// `decoupled`). The step t is an input (one float, read here), so the graph stays the same from step to step.
import {
  afterwards,
  checkAdamStepAttrs,
  checkLrScaleValue,
  checkOptimizerStepValue,
  expectSameShape,
  expectScalarShape,
  expectStepShape,
  overRows,
  type AdamStepAttrs,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

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
  const r0 = part?.start ?? 0;
  const pRows = rowOffsets(param, r0, part?.end);
  const mRows = rowOffsets(m, r0, part?.end);
  const vRows = rowOffsets(v, r0, part?.end);
  const { length: n, stride: ps } = lastAxis(param);
  const { stride: ms } = lastAxis(m);
  const { stride: vs } = lastAxis(v);
  const pd = param.data;
  const md = m.data;
  const vd = v.data;
  const stepSize = a.lr / (1 - a.beta1 ** t);
  const bc2Sqrt = Math.sqrt(1 - a.beta2 ** t);
  const decay = a.decoupled ? 1 - a.lr * a.weightDecay : 1;
  const eps = a.eps;
  const y = out ?? new Float32Array(rowCount(param.shape) * n);
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
  const param = requireInput(call, 0, "param");
  const m = requireInput(call, 1, "m");
  const v = requireInput(call, 2, "v");
  const step = requireInput(call, 3, "step");
  const lrScale = optionalInput(call, 4, "lrScale");
  const attrs = checkAdamStepAttrs(call);
  expectSameShape(call, "m", param, m);
  expectSameShape(call, "v", param, v);
  expectStepShape(call, step);
  const t = checkOptimizerStepValue(call, step.data[step.offset] ?? NaN);
  if (lrScale) expectScalarShape(call, "lrScale", lrScale);
  // A schedule scales lr wherever it appears, the decoupled decay included (torch reads group["lr"] for both).
  const a = lrScale ? { ...attrs, lr: attrs.lr * checkLrScaleValue(call, lrScale.data[lrScale.offset] ?? NaN) } : attrs;
  const { length: n } = lastAxis(param);
  const rows = rowCount(param.shape);
  const y = outData(call, param.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * ADAM_STEP_WORK, (start, end) =>
    adamStepImpl(param, m, v, t, a, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, param.shape));
});

/** Work per element in multiply-adds of the matmul core: three strided reads, a sqrt and a division (≈ 15). */
const ADAM_STEP_WORK = 15;
