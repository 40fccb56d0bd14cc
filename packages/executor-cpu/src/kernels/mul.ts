// mul: elementwise product with broadcasting (add's rules), for the gate of a SiLU-gated MLP (silu(gate) · up).
import { addShape, afterwards, broadcastStrides, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/**
 * a · b over the broadcast shape `shape`: each input is read through strides that are 0 on the axes it stretches, so
 * nothing is materialised. Multiplies in float64 (exact for two float32s) and rounds once, as a float32 product does.
 * @param a, b any strides, broadcastable to `shape`
 * @param out where to write `shape` row-major; default: a new array
 * @param part the rows (a row = the last axis of `shape`) to write; default: all
 */
export function mulImpl(a: StridedView, b: StridedView, shape: readonly number[], out?: Float32Array, part?: RowRange): Float32Array {
  const as: StridedView = { data: a.data, shape, strides: broadcastStrides(a.shape, a.strides, shape), offset: a.offset };
  const bs: StridedView = { data: b.data, shape, strides: broadcastStrides(b.shape, b.strides, shape), offset: b.offset };
  const r0 = part?.start ?? 0;
  const ra = rowOffsets(as, r0, part?.end);
  const rb = rowOffsets(bs, r0, part?.end);
  const n = shape.length === 0 ? 1 : shape[shape.length - 1]!;
  const sa = shape.length === 0 ? 0 : as.strides[shape.length - 1]!;
  const sb = shape.length === 0 ? 0 : bs.strides[shape.length - 1]!;
  const ad = a.data;
  const bd = b.data;
  const y = out ?? new Float32Array(rowCount(shape) * n);
  for (let r = 0; r < ra.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = ra[r]!, q = rb[r]!; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! * bd[q]!;
  }
  return y;
}

/** Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export const mulKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const shape = addShape(call, a, b);
  const n = shape.length === 0 ? 1 : shape[shape.length - 1]!;
  const rows = rowCount(shape);
  const y = outData(call, shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * MUL_WORK, (start, end) => mulImpl(a, b, shape, y, { start, end }));
  return afterwards(pending, () => result(call, y, shape));
});

/** Work per element in multiply-adds of the matmul core: two strided reads and a write (estimated ≈ 3). */
const MUL_WORK = 3;
