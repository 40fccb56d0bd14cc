// sum-to: the reverse of broadcasting. A bias's gradient is its output's gradient summed over every leading axis; a
// key/value head shared by g query heads (GQA) gets the sum over its group.
import { afterwards, checkSumToShape, overRows } from "@attngraph/graph";
import { sizeOf, type Shape } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

const NO_DATA = new Float32Array(0);

/**
 * Where each element of x lands in a dense row-major `to`: x's strides over that output, 0 on every summed axis (an
 * axis `to` lacks, at the front, or has as 1 where x has more). The same trick as broadcasting, read backwards.
 */
export function sumToStrides(xShape: Shape, to: Shape): number[] {
  const lead = xShape.length - to.length;
  const strides = new Array<number>(xShape.length).fill(0);
  for (let d = to.length - 1, s = 1; d >= 0; d--) {
    if (to[d] === xShape[lead + d]) strides[lead + d] = s;
    s *= to[d]!;
  }
  return strides;
}

/**
 * Adds rows [start, end) of x (a row = its last axis) into `acc` (`to`'s elements, float64). Rows are added in
 * row-major order, so summing all rows in one part or in several gives the same numbers, bit for bit.
 * @param x [...], any strides
 * @param acc the running sums of `to`, row-major; must start at −0 (see `sumToKernel`)
 */
export function sumToImpl(x: StridedView, to: Shape, acc: Float64Array, part?: RowRange): Float64Array {
  const r0 = part?.start ?? 0;
  const rows = rowOffsets(x, r0, part?.end);
  // The output position of each row's first element: x's leading multi-index walked over the output's strides.
  const strides = sumToStrides(x.shape, to);
  const dest = rowOffsets({ data: NO_DATA, shape: x.shape, strides, offset: 0 }, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const as = strides.length === 0 ? 0 : strides[strides.length - 1]!;
  const xd = x.data;
  for (let r = 0; r < rows.length; r++) {
    for (let j = 0, p = rows[r]!, q = dest[r]!; j < n; j++, p += xs, q += as) acc[q] = acc[q]! + xd[p]!;
  }
  return acc;
}

/** Input: x [...]; attrs { shape } (concrete at dispatch: the call's outShape) → outShape, x summed down to it. */
export const sumToKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const to = checkSumToShape(call, x);
  const size = sizeOf(to);
  const y = outData(call, to) ?? new Float32Array(size);
  // −0 is the identity of IEEE addition (0 is not: 0 + −0 = 0), so an output equal to x's shape is an exact copy.
  const acc = new Float64Array(size).fill(-0);
  const { length: n } = lastAxis(x);
  const pending = overRows(call, chunkWork, rowCount(x.shape), n * SUM_TO_WORK, (start, end) =>
    sumToImpl(x, to, acc, { start, end }),
  );
  return afterwards(pending, () => {
    // An empty x sums nothing: its sums are 0, not the −0 they started at.
    if (sizeOf(x.shape) === 0) y.fill(0);
    else y.set(acc);
    return result(call, y, to);
  });
});

/** Work per element in multiply-adds of the matmul core: a strided read and an add (estimated ≈ 2). */
const SUM_TO_WORK = 2;
