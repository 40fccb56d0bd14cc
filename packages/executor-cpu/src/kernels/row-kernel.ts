// The tail of every row-wise kernel adapter, after its input checks: where the result goes, the rows run in chunks
// (overRows) and the tensor handed back. Written once so that each kernel file is its checks, its Impl and its cost.
import { afterwards, overRows } from "@attngraph/graph";
import type { Shape, Tensor } from "@attngraph/tensor";
import { outData, result, type Call } from "./adapter.js";
import { rowCount, rowLength, type RowRange } from "./strided.js";

/**
 * A row kernel's tail over an input of `shape`: `run` puts rows `part` into `into`, rows [0, rows) in chunks (none
 * when a row is empty: a [1e9, 0] view must not plan a billion empty rows), then `done` makes the tensor.
 * @param elementWork the work of one element, in multiply-adds of the matmul core (sizes the chunks)
 */
type RowTail<A> = (
  call: Call,
  chunkWork: number,
  shape: Shape,
  elementWork: number,
  run: (into: A, part: RowRange) => unknown,
) => Tensor | Promise<Tensor>;

/** The RowTail whose rows go into what `open` gives for the call, and whose tensor its `done` makes. */
function rowTail<A>(open: (call: Call, shape: Shape) => { readonly into: A; readonly done: () => Tensor }): RowTail<A> {
  return (call, chunkWork, shape, elementWork, run) => {
    const { into, done } = open(call, shape);
    const n = rowLength(shape);
    const pending = overRows(call, chunkWork, n === 0 ? 0 : rowCount(shape), n * elementWork, (start, end) =>
      run(into, { start, end }),
    );
    return afterwards(pending, done);
  };
}

/** Writes every row of an output of `shape` (row-major) with `write`, into the planned output or a new array. */
export const writeRows: RowTail<Float32Array> = rowTail((call, shape) => {
  const y = outData(call, shape) ?? new Float32Array(rowCount(shape) * rowLength(shape));
  return { into: y, done: () => result(call, y, shape) };
});

/**
 * The sum over every row of an input of `shape` [..., E]: `add` adds rows `part` into a float64 [E], stored as float32
 * once at the end. Chunks run in row order, so the sums are those of one call, bit for bit.
 */
export const sumRows: RowTail<Float64Array> = rowTail((call, shape) => {
  const n = rowLength(shape);
  const to = [n];
  const y = outData(call, to) ?? new Float32Array(n);
  const acc = new Float64Array(n);
  return {
    into: acc,
    done: () => {
      y.set(acc);
      return result(call, y, to);
    },
  };
});
