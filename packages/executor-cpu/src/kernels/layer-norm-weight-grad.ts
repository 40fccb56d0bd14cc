// layer-norm-weight-grad: the gradient of layer norm's weight (gamma), Σ over rows of grad ⊙ x̂. (Its bias's gradient
// is sum-to of grad.) x̂ is recomputed from x, as layer-norm-grad does.
import { normWeightGradKernel } from "./norm-weight-grad.js";
import { rowStats } from "./norm-rows.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * Adds grad ⊙ x̂ of rows [start, end) into `acc` [E] (float64). Rows are added in order, so one part or several give
 * the same numbers, bit for bit.
 * @param grad [..., E], any strides
 * @param x [..., E], any strides
 */
export function layerNormWeightGradImpl(
  grad: StridedView,
  x: StridedView,
  eps: number,
  acc: Float64Array,
  part?: RowRange,
): Float64Array {
  const [, n, [xRows, gRows], [xs, gs], [xd, gd]] = planRows(part, x, grad);
  for (let r = 0; r < xRows.length; r++) {
    const { mean, rstd } = rowStats(xd, xRows[r]!, n, xs, eps);
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      acc[j] = acc[j]! + gd[q]! * ((xd[p]! - mean) * rstd);
  }
  return acc;
}

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 8). */
const LAYER_NORM_WEIGHT_GRAD_WORK = 8;

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel = normWeightGradKernel(layerNormWeightGradImpl, LAYER_NORM_WEIGHT_GRAD_WORK);
