// softmax-grad: the input gradient of softmax(scale · x), from the forward output y alone (nothing recomputed), the
// step that carries the attention weights' gradient back to the scores.
import { afterwards, checkGradScale, expectSameShape, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/**
 * dx = scale · y ⊙ (grad − Σ_row grad ⊙ y) per row (a row = the last axis), the sum in float64, stored as float32.
 * - A row with y all 0 (every key masked; the forward softmax wrote zeros) gives exactly +0, never NaN, whatever its
 *   gradient holds: nothing reached the forward output from that row, so nothing flows back.
 * - Otherwise NaN propagates: a NaN in y or grad makes the row's sum NaN, and so the whole row, as in PyTorch.
 * Each row is read whole before it is written.
 * @param y [..., S], any strides
 * @param grad [..., S], any strides
 * @param out where to write [..., S] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function softmaxGradImpl(
  y: StridedView,
  grad: StridedView,
  scale: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const r0 = part?.start ?? 0;
  const yRows = rowOffsets(y, r0, part?.end);
  const gRows = rowOffsets(grad, r0, part?.end);
  const { length: n, stride: ys } = lastAxis(y);
  const { stride: gs } = lastAxis(grad);
  const yd = y.data;
  const gd = grad.data;
  const dx = out ?? new Float32Array(rowCount(y.shape) * n);
  for (let r = 0; r < yRows.length; r++) {
    let dot = 0;
    let masked = true;
    for (let j = 0, p = yRows[r]!, q = gRows[r]!; j < n; j++, p += ys, q += gs) {
      const v = yd[p]!;
      if (v !== 0) masked = false;
      dot += gd[q]! * v;
    }
    const o = (r0 + r) * n;
    if (masked) {
      dx.fill(0, o, o + n);
      continue;
    }
    for (let j = 0, p = yRows[r]!, q = gRows[r]!; j < n; j++, p += ys, q += gs)
      dx[o + j] = scale * yd[p]! * (gd[q]! - dot);
  }
  return dx;
}

/** Inputs: y [..., S] (the softmax's output), grad [..., S]; attrs { scale } → [..., S]. */
export const softmaxGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const y = requireInput(call, 0, "y");
  const grad = requireInput(call, 1, "grad");
  const scale = checkGradScale(call);
  expectSameShape(call, "grad", y, grad);
  const { length: n } = lastAxis(y);
  const rows = rowCount(y.shape);
  const dx = outData(call, y.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * SOFTMAX_GRAD_WORK, (start, end) =>
    softmaxGradImpl(y, grad, scale, dx, { start, end }),
  );
  return afterwards(pending, () => result(call, dx, y.shape));
});

/** Work per element in multiply-adds of the matmul core: two strided passes over two inputs (estimated ≈ 4). */
const SOFTMAX_GRAD_WORK = 4;
