// mask-grad: the backward of mask and ALiBi. Read from the forward output, so every hiding rule (causal, window,
// padding, user mask, −∞ bias) is covered without repeating it: a score shown as −∞ got no gradient.
import { afterwards, checkGradScale, expectSameShape, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/**
 * out = masked == −∞ ? 0 : scale · grad, elementwise. Only −∞ hides: a +∞ or NaN in `masked` came from the scores
 * themselves, not from the mask, so its gradient passes (and a NaN in grad stays NaN there).
 * @param grad [...], any strides
 * @param masked [...] (grad's shape), any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function maskGradImpl(
  grad: StridedView,
  masked: StridedView,
  scale: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const r0 = part?.start ?? 0;
  const gRows = rowOffsets(grad, r0, part?.end);
  const mRows = rowOffsets(masked, r0, part?.end);
  const { length: n, stride: gs } = lastAxis(grad);
  const { stride: ms } = lastAxis(masked);
  const gd = grad.data;
  const md = masked.data;
  const y = out ?? new Float32Array(rowCount(grad.shape) * n);
  for (let r = 0; r < gRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = gRows[r]!, q = mRows[r]!; j < n; j++, p += gs, q += ms)
      y[o + j] = md[q] === -Infinity ? 0 : scale * gd[p]!;
  }
  return y;
}

/** Inputs: grad [...], masked [...] (the forward output); attrs { scale } → grad's shape. */
export const maskGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const masked = requireInput(call, 1, "masked");
  const scale = checkGradScale(call);
  expectSameShape(call, "masked", grad, masked);
  const { length: n } = lastAxis(grad);
  const rows = rowCount(grad.shape);
  const y = outData(call, grad.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * MASK_GRAD_WORK, (start, end) =>
    maskGradImpl(grad, masked, scale, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, grad.shape));
});

/** Work per element in multiply-adds of the matmul core: two strided reads, a compare and a multiply (≈ 3). */
const MASK_GRAD_WORK = 3;
