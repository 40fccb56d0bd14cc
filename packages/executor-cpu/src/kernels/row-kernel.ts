// The tail of every row-wise kernel adapter, after its input checks: where the result goes, the rows run in chunks
// (overRows) and the tensor handed back. Written once so that each kernel file is its checks, its Impl and its cost.
import { afterwards, overRows } from "@attngraph/graph";
import type { Shape, Tensor } from "@attngraph/tensor";
import { outData, result, type Call } from "./adapter.js";
import { rowCount, rowLength, type RowRange } from "./strided.js";

/** Rows [0, rows) in chunks, or none when a row is empty: a [1e9, 0] view must not plan a billion empty rows. */
function overEveryRow(call: Call, chunkWork: number, shape: Shape, elementWork: number, run: (part: RowRange) => void) {
  const n = rowLength(shape);
  return overRows(call, chunkWork, n === 0 ? 0 : rowCount(shape), n * elementWork, (start, end) => run({ start, end }));
}

/**
 * Writes every row of an output of `shape` (row-major) with `write`, into the planned output or a new array.
 * @param elementWork the work of one output element, in multiply-adds of the matmul core (sizes the chunks)
 */
export function writeRows(
  call: Call,
  chunkWork: number,
  shape: Shape,
  elementWork: number,
  write: (y: Float32Array, part: RowRange) => unknown,
): Tensor | Promise<Tensor> {
  const y = outData(call, shape) ?? new Float32Array(rowCount(shape) * rowLength(shape));
  const pending = overEveryRow(call, chunkWork, shape, elementWork, (part) => write(y, part));
  return afterwards(pending, () => result(call, y, shape));
}

/**
 * The sum over every row of an input of `shape` [..., E]: `add` adds rows `part` into a float64 [E], stored as float32
 * once at the end. Chunks run in row order, so the sums are those of one call, bit for bit.
 */
export function sumRows(
  call: Call,
  chunkWork: number,
  shape: Shape,
  elementWork: number,
  add: (acc: Float64Array, part: RowRange) => unknown,
): Tensor | Promise<Tensor> {
  const n = rowLength(shape);
  const to = [n];
  const y = outData(call, to) ?? new Float32Array(n);
  const acc = new Float64Array(n);
  const pending = overEveryRow(call, chunkWork, shape, elementWork, (part) => add(acc, part));
  return afterwards(pending, () => {
    y.set(acc);
    return result(call, y, to);
  });
}
