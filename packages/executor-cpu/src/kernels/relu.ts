// relu: the activation of torch.nn.TransformerEncoderLayer's default MLP, max(x, 0) with NaN kept (torch.relu).
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/** ReLU of one value, by the test relu-grad makes on y (`<= 0`): a NaN compares false and is kept; −0 gives +0. */
export function relu(v: number): number {
  return v <= 0 ? 0 : v;
}

/**
 * ReLU elementwise. Each element is read before it is written, so `out` may be x's memory.
 * @param x [...], any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function reluImpl(x: StridedView, out?: Float32Array, part?: RowRange): Float32Array {
  const r0 = part?.start ?? 0;
  const rows = rowOffsets(x, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const xd = x.data;
  const y = out ?? new Float32Array(rowCount(x.shape) * n);
  for (let r = 0; r < rows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = rows[r]!; j < n; j++, p += xs) y[o + j] = relu(xd[p]!);
  }
  return y;
}

/** Input: x [...] → same shape. */
export const reluKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const { length: n } = lastAxis(x);
  const rows = rowCount(x.shape);
  const y = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n, (start, end) => reluImpl(x, y, { start, end }));
  return afterwards(pending, () => result(call, y, x.shape));
});
