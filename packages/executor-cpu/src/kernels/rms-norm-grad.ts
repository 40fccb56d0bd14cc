// rms-norm-grad and rms-norm-weight-grad: RMS norm's gradients to its input and to its weight, r = 1/RMS recomputed
// from x as the forward computes it (rmsOf), so nothing is saved between the passes.
import { normGradKernel, normWeightGradKernel, type XGradRows } from "./norm-kernels.js";
import { rmsOf, type ParamVector } from "./norm-rows.js";

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 7). */
const RMS_NORM_GRAD_WORK = 7;

/**
 * dx = r · (ĝ − x̂ · mean(ĝ ⊙ x̂)) per row, x̂ = x · r, ĝ = grad ⊙ weight, in float64 stored as float32.
 * @param rows the rows of x and grad [..., E] to write, any strides
 * @param y where to write [..., E] row-major
 * @param weight [E] (absent: 1)
 */
export function rmsNormGradImpl(rows: XGradRows, eps: number, y: Float32Array, weight: ParamVector): void {
  const [r0, n, [xRows, gRows], [xs, gs], [xd, gd]] = rows;
  const { data: wd, stride: ws, offset: wo } = weight;
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
}

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormGradKernel = normGradKernel(rmsNormGradImpl, RMS_NORM_GRAD_WORK);

/** Adds grad ⊙ x̂ of the rows `rows` plans into `acc` [E] (float64), rows in order. */
export function rmsNormWeightGradImpl(rows: XGradRows, eps: number, acc: Float64Array): void {
  const [, n, [xRows, gRows], [xs, gs], [xd, gd]] = rows;
  for (let r = 0; r < xRows.length; r++) {
    const inv = rmsOf(xd, xRows[r]!, n, xs, eps);
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      acc[j] = acc[j]! + gd[q]! * (xd[p]! * inv);
  }
}

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel = normWeightGradKernel(rmsNormWeightGradImpl, RMS_NORM_GRAD_WORK);
