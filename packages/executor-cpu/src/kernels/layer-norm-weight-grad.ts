// layer-norm-weight-grad: the gradient of layer norm's weight (gamma), Σ over rows of grad ⊙ x̂. (Its bias's gradient
// is sum-to of grad.) x̂ is recomputed from x, as layer-norm-grad does.
import { afterwards, checkLayerNormEps, expectAxis, expectSameShape, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { rowStats } from "./layer-norm-grad.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

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
  const r0 = part?.start ?? 0;
  const xRows = rowOffsets(x, r0, part?.end);
  const gRows = rowOffsets(grad, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const { stride: gs } = lastAxis(grad);
  const xd = x.data;
  const gd = grad.data;
  for (let r = 0; r < xRows.length; r++) {
    const { mean, rstd } = rowStats(xd, xRows[r]!, n, xs, eps);
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      acc[j] = acc[j]! + gd[q]! * ((xd[p]! - mean) * rstd);
  }
  return acc;
}

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  const { length: n } = lastAxis(x);
  const shape = [n];
  const y = outData(call, shape) ?? new Float32Array(n);
  const acc = new Float64Array(n);
  const pending = overRows(call, chunkWork, rowCount(x.shape), n * LAYER_NORM_WEIGHT_GRAD_WORK, (start, end) =>
    layerNormWeightGradImpl(grad, x, eps, acc, { start, end }),
  );
  return afterwards(pending, () => {
    y.set(acc);
    return result(call, y, shape);
  });
});

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 8). */
const LAYER_NORM_WEIGHT_GRAD_WORK = 8;
