// How an upload lies in the module's memory: dense row-major, except a transpose of a dense tensor (a permutation of a
// dense layout, e.g. a checkpoint's Conv1D weight [in, out] seen as nn.Linear's [out, in]), which is copied as the one
// span it covers and keeps its strides: a plain copy instead of a reordering one, and the layout the matmul packs
// fastest from when it is the transposed operand.
import { isDensePermutation, isRowMajor, type AnyTensor } from "@attngraph/tensor";

/** An upload kept in its own strided layout: not row-major, but a permutation of a dense one. */
export function keepsStrides(t: AnyTensor): boolean {
  return t.size > 0 && !isRowMajor(t) && isDensePermutation(t);
}

/** Writes `t`'s upload at element index `at` of `out` (its own dtype's view of the memory), as keepsStrides says. */
export function writeUpload(t: AnyTensor, out: Float32Array | Int32Array, at: number): void {
  if (keepsStrides(t)) out.set(t.data.subarray(t.offset, t.offset + t.size), at);
  else t.copyInto(out, at);
}
