// rms-norm: Llama's LlamaRMSNorm over the last axis, the normalisation before attention and before the MLP in a Llama
// block (and its final norm).
import { normKernel, type XRows } from "./norm-kernels.js";
import { rmsOf, type ParamVector } from "./norm-rows.js";

/**
 * x · r · weight per row, r = 1/sqrt(mean(x²) + eps), in float64 stored as float32. No mean is subtracted, so there is
 * nothing to cancel and one pass gives r; a zero row gives zeros. Each row is read whole before it is written, so `y`
 * may be x's own memory.
 * @param x the rows of x [..., E] to write, any strides
 * @param y where to write [..., E] row-major
 * @param weight [E] (absent: 1)
 */
export function rmsNormImpl(x: XRows, eps: number, y: Float32Array, weight: ParamVector): void {
  const [r0, n, [rows], [xs], [xd]] = x;
  const { data: wd, stride: ws, offset: wo } = weight;
  for (let r = 0; r < rows.length; r++) {
    const inv = rmsOf(xd, rows[r]!, n, xs, eps);
    const o = (r0 + r) * n;
    for (let j = 0, p = rows[r]!; j < n; j++, p += xs)
      y[o + j] = wd === undefined ? xd[p]! * inv : xd[p]! * inv * wd[wo + j * ws]!;
  }
}

/** Work per element in multiply-adds of the matmul core: two passes over the row (estimated ≈ 5). */
const RMS_NORM_WORK = 5;

/** Inputs: x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormKernel = normKernel(false, rmsNormImpl, RMS_NORM_WORK);
