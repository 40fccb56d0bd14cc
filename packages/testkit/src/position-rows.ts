// What the position-embedding tests of the executors share: the cases (ids whose values the kernel must never read, of
// any rank, with offsets up to the table's last row) and the rows each should copy.
import { Tensor } from "@attngraph/tensor";

/** [ids, offset] cases for a table of `p` rows: ids of rank 2, 1 and 3 with arbitrary values (never read). */
export function positionCases(p: number): readonly (readonly [Tensor<"int32">, number])[] {
  return [
    [Tensor.int32([42, -3, 9000, 0], [2, 2]), 0],
    [Tensor.int32([1, 1, 1, 1], [4]), 5],
    [Tensor.int32([7], [1, 1, 1]), p - 1],
  ];
}

/** Rows from..from+n-1 of a table [P, E] (any strides), exactly, row-major. */
export function tableRows(t: Tensor, from: number, n: number): number[] {
  const e = t.shape[1]!;
  return Array.from(
    t
      .contiguous()
      .toFloat32Array()
      .slice(from * e, (from + n) * e),
  );
}
