// rms-norm-grad and rms-norm-weight-grad: RMS norm's gradients to its input and to its weight, r = 1/RMS recomputed
// from x as the forward computes it (rmsOf), so nothing is saved between the passes.
import {
  afterwards,
  checkLayerNormEps,
  expectAxis,
  expectRmsWeight,
  expectSameShape,
  overRows,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result } from "./adapter.js";
import { rmsOf } from "./rms-norm.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

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
  const r0 = part?.start ?? 0;
  const xRows = rowOffsets(x, r0, part?.end);
  const gRows = rowOffsets(grad, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const { stride: gs } = lastAxis(grad);
  const xd = x.data;
  const gd = grad.data;
  const wd = weight?.data;
  const ws = weight?.strides[0] ?? 0;
  const wo = weight?.offset ?? 0;
  const y = out ?? new Float32Array(rowCount(x.shape) * n);
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
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  const { length: n } = lastAxis(x);
  expectRmsWeight(call, n, weight);
  const rows = rowCount(x.shape);
  const y = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * RMS_NORM_GRAD_WORK, (start, end) =>
    rmsNormGradImpl(grad, x, weight, eps, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, x.shape));
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
  const r0 = part?.start ?? 0;
  const xRows = rowOffsets(x, r0, part?.end);
  const gRows = rowOffsets(grad, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const { stride: gs } = lastAxis(grad);
  for (let r = 0; r < xRows.length; r++) {
    const inv = rmsOf(x.data, xRows[r]!, n, xs, eps);
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      acc[j] = acc[j]! + grad.data[q]! * (x.data[p]! * inv);
  }
  return acc;
}

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  const { length: n } = lastAxis(x);
  const shape = [n];
  const y = outData(call, shape) ?? new Float32Array(n);
  const acc = new Float64Array(n);
  const pending = overRows(call, chunkWork, rowCount(x.shape), n * RMS_NORM_GRAD_WORK, (start, end) =>
    rmsNormWeightGradImpl(grad, x, eps, acc, { start, end }),
  );
  return afterwards(pending, () => {
    y.set(acc);
    return result(call, y, shape);
  });
});

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 7). */
const RMS_NORM_GRAD_WORK = 7;
