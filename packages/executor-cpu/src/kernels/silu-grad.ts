// silu-grad: SiLU's input gradient from its input, as PyTorch's silu_backward: grad · s · (1 + x · (1 − s)).
import { afterwards, expectSameShape, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { sigmoid } from "./silu.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/**
 * grad · silu'(x) with the forward's overflow-free sigmoid: for a large negative x, s·(1 − s) underflows to 0 first, so
 * the result is 0, not ∞ · 0.
 * @param grad, x [...] (same shape), any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function siluGradImpl(grad: StridedView, x: StridedView, out?: Float32Array, part?: RowRange): Float32Array {
  const r0 = part?.start ?? 0;
  const gRows = rowOffsets(grad, r0, part?.end);
  const xRows = rowOffsets(x, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const { stride: gs } = lastAxis(grad);
  const o32 = out ?? new Float32Array(rowCount(x.shape) * n);
  for (let r = 0; r < xRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs) {
      const v = x.data[p]!;
      const s = sigmoid(v);
      o32[o + j] = grad.data[q]! * (s + v * (s * (1 - s)));
    }
  }
  return o32;
}

/** Inputs: grad [...], x [...] (the forward input) → x's shape. */
export const siluGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  expectSameShape(call, "x", grad, x);
  const { length: n } = lastAxis(x);
  const rows = rowCount(x.shape);
  const o = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * SILU_WORK, (start, end) => siluGradImpl(grad, x, o, { start, end }));
  return afterwards(pending, () => result(call, o, x.shape));
});

/** Work per element in multiply-adds of the matmul core: an exp, a divide and a few products (estimated ≈ 9). */
const SILU_WORK = 9;
