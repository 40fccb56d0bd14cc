// layer-norm-grad: layer norm's input gradient. The row statistics are recomputed from x (two passes, as the forward
// kernel computes them) instead of being saved by the forward pass: cheaper in memory, and the same numbers.
import { normGradKernel, type XGradRows } from "./norm-kernels.js";
import { rowStats, type ParamVector } from "./norm-rows.js";

/**
 * Per row, with x̂ = (x − μ) · rstd and ĝ = grad ⊙ weight (weight absent = 1):
 * dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), in float64, stored as float32.
 * @param rows the rows of x and grad [..., E] to write, any strides
 * @param dx where to write [..., E] row-major
 * @param weight [E] (absent: 1)
 */
export function layerNormGradImpl(rows: XGradRows, eps: number, dx: Float32Array, weight: ParamVector): void {
  const [r0, n, [xRows, gRows], [xs, gs], [xd, gd]] = rows;
  const { data: wd, stride: ws, offset: wo } = weight;
  for (let r = 0; r < xRows.length; r++) {
    const { mean, rstd } = rowStats(xd, xRows[r]!, n, xs, eps);
    // mean(ĝ) and mean(ĝ ⊙ x̂) over the row.
    let sg = 0;
    let sgx = 0;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs) {
      const gh = wd === undefined ? gd[q]! : gd[q]! * wd[wo + j * ws]!;
      sg += gh;
      sgx += gh * (xd[p]! - mean) * rstd;
    }
    const mg = sg / n;
    const mgx = sgx / n;
    const o = (r0 + r) * n;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs) {
      const gh = wd === undefined ? gd[q]! : gd[q]! * wd[wo + j * ws]!;
      dx[o + j] = rstd * (gh - mg - (xd[p]! - mean) * rstd * mgx);
    }
  }
}

/** Work per element in multiply-adds of the matmul core: four passes over the row (estimated ≈ 12). */
const LAYER_NORM_GRAD_WORK = 12;

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const layerNormGradKernel = normGradKernel(layerNormGradImpl, LAYER_NORM_GRAD_WORK);
