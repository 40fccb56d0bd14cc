// layer-norm: nn.LayerNorm over the last axis, the normalisation before attention and before the MLP in a pre-norm
// transformer block.
import { normKernel, type XRows } from "./norm-kernels.js";
import { layerNormRow, rowStats, type ParamVector } from "./norm-rows.js";

/**
 * (x − mean) / sqrt(var + eps) · weight + bias per row, in float64, stored as float32. Two passes over each row (the
 * mean, then the squared deviations from it) instead of E[x²] − E[x]²: that difference cancels catastrophically for a
 * row far from 0 (1e4 + small noise in float32), and a constant row would give a tiny negative variance. A constant row
 * has deviations of exactly 0, so it gives exactly `bias` (0 without one). Each row is read whole before it is written,
 * so `y` may be x's own memory.
 * @param x the rows of x [..., E] to write, any strides
 * @param y where to write [..., E] row-major
 * @param weight [E] (absent: 1), bias [E] (absent: 0)
 */
export function layerNormImpl(x: XRows, eps: number, y: Float32Array, weight: ParamVector, bias: ParamVector): void {
  const [r0, n, [rows], [xs], [xd]] = x;
  for (let r = 0; r < rows.length; r++) {
    const { mean, rstd } = rowStats(xd, rows[r]!, n, xs, eps);
    layerNormRow(xd, rows[r]!, xs, n, mean, rstd, weight, bias, y, (r0 + r) * n);
  }
}

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 8 on Node 20). */
const LAYER_NORM_WORK = 8;

/** Inputs: x [..., E], optional weight [E] and bias [E]; attrs { eps } → [..., E]. */
export const layerNormKernel = normKernel(true, layerNormImpl, LAYER_NORM_WORK);
