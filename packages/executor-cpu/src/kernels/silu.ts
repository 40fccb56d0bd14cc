// silu: the gate activation of Llama's MLP, x · sigmoid(x) (F.silu).
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/** sigmoid(v) from exp(−|v|) only: exp never overflows, so silu(−3e38) is −0 and silu(+∞) is +∞ (−∞ gives NaN, as torch). */
export function sigmoid(v: number): number {
  const z = Math.exp(-Math.abs(v));
  return v >= 0 ? 1 / (1 + z) : z / (1 + z);
}

/**
 * SiLU elementwise (float64 math, stored as float32). Each element is read before it is written, so `out` may be x's.
 * @param x [...], any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function siluImpl(x: StridedView, out?: Float32Array, part?: RowRange): Float32Array {
  const r0 = part?.start ?? 0;
  const rows = rowOffsets(x, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const xd = x.data;
  const y = out ?? new Float32Array(rowCount(x.shape) * n);
  for (let r = 0; r < rows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = rows[r]!; j < n; j++, p += xs) y[o + j] = xd[p]! * sigmoid(xd[p]!);
  }
  return y;
}

/** Input: x [...] → same shape. */
export const siluKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const { length: n } = lastAxis(x);
  const rows = rowCount(x.shape);
  const y = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * SILU_WORK, (start, end) => siluImpl(x, y, { start, end }));
  return afterwards(pending, () => result(call, y, x.shape));
});

/** Work per element in multiply-adds of the matmul core: an exp and a divide (estimated ≈ 8, as gelu's tanh form). */
const SILU_WORK = 8;
