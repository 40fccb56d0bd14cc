// Layout questions about a strided view that every executor's kernels ask of their own values (host tensors, wasm
// values, GPU buffers): they read only shape and strides, so the rule is written once here.
import type { Shape } from "./shape.js";

/** What the layout helpers read of a view. */
export interface StridedLayout {
  readonly shape: Shape;
  /** In elements, one per dim. */
  readonly strides: readonly number[];
}

/** Whether the elements are dense and row-major (size-1 dims may have any stride), as `Tensor.isContiguous`. */
export function isRowMajor({ shape, strides }: StridedLayout): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && strides[i] !== expected) return false;
    expected *= shape[i]!;
  }
  return true;
}

/**
 * The one stride that walks every row of [..., K] (every index of the leading axes, row-major), when the leading axes
 * collapse into one (dense, sliced along the last axis, or with size-1 axes); undefined when they do not (e.g. [L, B, E]
 * seen through a permute of [B, L, E]). Lets matrix kernels treat [..., K] as a plain [rows, K] operand without a copy.
 */
export function leadingStride({ shape, strides }: StridedLayout): number | undefined {
  let stride: number | undefined;
  let next = 0; // the stride the next outer non-1 axis must have to continue the run
  for (let d = shape.length - 2; d >= 0; d--) {
    const n = shape[d]!;
    if (n === 1) continue;
    if (stride === undefined) stride = strides[d]!;
    else if (strides[d] !== next) return undefined;
    next = strides[d]! * n;
  }
  return stride ?? 0;
}

/**
 * Whether the view covers exactly its elements and nothing else from its offset, in some order of its axes: a
 * permutation of a dense layout (a transpose of a contiguous tensor, e.g. Conv1D's [in, out] read as [out, in]). Such
 * a view can be copied as the one span of memory it spans and keep its strides, instead of being reordered.
 */
export function isDensePermutation({ shape, strides }: StridedLayout): boolean {
  const axes = shape.map((n, d) => ({ n, s: strides[d]! })).filter((a) => a.n !== 1);
  axes.sort((a, b) => a.s - b.s);
  let expected = 1;
  for (const a of axes) {
    if (a.s !== expected) return false;
    expected *= a.n;
  }
  return true;
}
