// layer-norm-weight-grad: the gradient of layer norm's weight (gamma), Σ over rows of grad ⊙ x̂. (Its bias's gradient
// is sum-to of grad.) x̂ is recomputed from x, as layer-norm-grad does.
import { normWeightGradKernel, type XGradRows } from "./norm-kernels.js";
import { rowStats } from "./norm-rows.js";

/**
 * Adds grad ⊙ x̂ of the rows `rows` plans into `acc` [E] (float64), rows in order.
 * @param rows the rows of x and grad [..., E], any strides
 */
export function layerNormWeightGradImpl(rows: XGradRows, eps: number, acc: Float64Array): void {
  const [, n, [xRows, gRows], [xs, gs], [xd, gd]] = rows;
  for (let r = 0; r < xRows.length; r++) {
    const { mean, rstd } = rowStats(xd, xRows[r]!, n, xs, eps);
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      acc[j] = acc[j]! + gd[q]! * ((xd[p]! - mean) * rstd);
  }
}

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 8). */
const LAYER_NORM_WEIGHT_GRAD_WORK = 8;

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel = normWeightGradKernel(layerNormWeightGradImpl, LAYER_NORM_WEIGHT_GRAD_WORK);
