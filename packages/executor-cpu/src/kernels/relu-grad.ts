// relu-grad: ReLU's input gradient from its output, as PyTorch's threshold_backward: 0 where y <= 0, else grad.
import { afterwards, expectSameShape, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/**
 * grad where y > 0, else 0: a select, not grad · (y > 0), so a NaN or infinite grad where y <= 0 still gives 0, and a
 * NaN y (compares false) lets grad through, as PyTorch's does.
 * @param grad [...], any strides
 * @param y [...] (grad's shape), the forward output, any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function reluGradImpl(grad: StridedView, y: StridedView, out?: Float32Array, part?: RowRange): Float32Array {
  const r0 = part?.start ?? 0;
  const gRows = rowOffsets(grad, r0, part?.end);
  const yRows = rowOffsets(y, r0, part?.end);
  const { length: n, stride: ys } = lastAxis(y);
  const { stride: gs } = lastAxis(grad);
  const gd = grad.data;
  const yd = y.data;
  const o32 = out ?? new Float32Array(rowCount(y.shape) * n);
  for (let r = 0; r < yRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = yRows[r]!, q = gRows[r]!; j < n; j++, p += ys, q += gs) o32[o + j] = yd[p]! <= 0 ? 0 : gd[q]!;
  }
  return o32;
}

/** Inputs: grad [...], y [...] (the forward output) → y's shape. */
export const reluGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const y = requireInput(call, 1, "y");
  expectSameShape(call, "y", grad, y);
  const { length: n } = lastAxis(y);
  const rows = rowCount(y.shape);
  const o = outData(call, y.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n, (start, end) => reluGradImpl(grad, y, o, { start, end }));
  return afterwards(pending, () => result(call, o, y.shape));
});
