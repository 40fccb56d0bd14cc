// rms-norm-grad and rms-norm-weight-grad: RMS norm's gradients to its input and to its weight, r = 1/RMS recomputed
// from x as the forward computes it (rmsOf), so nothing is saved between the passes.
import type { RmsNormGradAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, requireInput, attrsOf } from "./adapter.js";
import { normWeightGradKernel } from "./norm-weight-grad.js";
import { paramVector, rmsOf } from "./norm-rows.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 7). */
const RMS_NORM_GRAD_WORK = 7;

/**
 * dx = r · (ĝ − x̂ · mean(ĝ ⊙ x̂)) per row, x̂ = x · r, ĝ = grad ⊙ weight, in float64 stored as float32.
 * @param grad, x [..., E], any strides; weight [E] or undefined (1)
 * @param out where to write [..., E] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function rmsNormGradImpl(
  grad: StridedView,
  x: StridedView,
  weight: StridedView | undefined,
  eps: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [xRows, gRows], [xs, gs], [xd, gd]] = planRows(part, x, grad);
  const { data: wd, stride: ws, offset: wo } = paramVector(weight);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  for (let r = 0; r < xRows.length; r++) {
    const inv = rmsOf(xd, xRows[r]!, n, xs, eps);
    let dot = 0;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      dot += gd[q]! * (wd === undefined ? 1 : wd[wo + j * ws]!) * xd[p]!;
    const c = (dot / n) * inv * inv; // mean(ĝ ⊙ x̂) · r, applied to x (x̂ · r · mean = x · r² · mean(ĝ ⊙ x))
    const o = (r0 + r) * n;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      y[o + j] = inv * (gd[q]! * (wd === undefined ? 1 : wd[wo + j * ws]!) - xd[p]! * c);
  }
  return y;
}

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const weight = optionalInput(call, 2, "weight");
  const { eps } = attrsOf<RmsNormGradAttrs>(call);
  return writeRows(call, chunkWork, x.shape, RMS_NORM_GRAD_WORK, (y, part) =>
    rmsNormGradImpl(grad, x, weight, eps, y, part),
  );
});

/**
 * Adds grad ⊙ x̂ of rows [start, end) into `acc` [E] (float64), rows in order, so one part or several give the same
 * numbers bit for bit.
 */
export function rmsNormWeightGradImpl(
  grad: StridedView,
  x: StridedView,
  eps: number,
  acc: Float64Array,
  part?: RowRange,
): Float64Array {
  const [, n, [xRows, gRows], [xs, gs], [xd, gd]] = planRows(part, x, grad);
  for (let r = 0; r < xRows.length; r++) {
    const inv = rmsOf(xd, xRows[r]!, n, xs, eps);
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      acc[j] = acc[j]! + gd[q]! * (xd[p]! * inv);
  }
  return acc;
}

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel = normWeightGradKernel(rmsNormWeightGradImpl, RMS_NORM_GRAD_WORK);
