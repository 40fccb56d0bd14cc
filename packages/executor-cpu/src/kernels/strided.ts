// What the pure `…Impl` functions read: a strided view onto a Float32Array. A Tensor is one structurally, but the
// Impl functions depend only on these four fields, so another host (a worker, a test) can call them on plain arrays.
import type { Shape } from "@attngraph/tensor";

export interface StridedView {
  readonly data: Float32Array;
  readonly shape: Shape;
  /** In elements, one per dim; any layout (transposed, sliced, broadcast with stride 0). */
  readonly strides: readonly number[];
  /** Index into `data` of element [0, 0, ...]. */
  readonly offset: number;
}

/** A range of rows [start, end) of a kernel's output, in row-major order of its leading axes: one chunk of its work. */
export interface RowRange {
  readonly start: number;
  readonly end: number;
}

/** The number of rows (a row = the last axis) of `shape`: the product of its leading dims, 1 for rank 0 and 1. */
export function rowCount(shape: readonly number[]): number {
  let rows = 1;
  for (let d = 0; d < shape.length - 1; d++) rows *= shape[d]!;
  return rows;
}

/** The length of a row (the last axis) of `shape`: 1 for rank 0, one row of one element, as `rowCount` counts it. */
export function rowLength(shape: readonly number[]): number {
  return shape.length === 0 ? 1 : shape[shape.length - 1]!;
}

/**
 * The `data` index of the first element of every row (a row = the last axis) in [start, end) (default: every row), in
 * row-major order of the leading axes. Kernels that work row by row (projection, softmax, dropout) walk these once
 * instead of running an odometer in their inner loop. A rank-0 view is one row of one element.
 */
export function rowOffsets(view: StridedView, start = 0, end = rowCount(view.shape)): Float64Array {
  const { shape, strides } = view;
  const lead = Math.max(0, shape.length - 1);
  const out = new Float64Array(Math.max(0, end - start));
  // The multi-index of row `start`, so that a chunk of rows costs its own length, not the rows before it.
  const idx = new Array<number>(lead).fill(0);
  let base = view.offset;
  for (let d = lead - 1, rest = start; d >= 0 && rest > 0; d--) {
    idx[d] = rest % shape[d]!;
    base += idx[d]! * strides[d]!;
    rest = Math.floor(rest / shape[d]!);
  }
  for (let r = 0; r < out.length; r++) {
    out[r] = base;
    // Advance the leading multi-index like an odometer, keeping `base` in step.
    for (let d = lead - 1; d >= 0; d--) {
      idx[d]!++;
      base += strides[d]!;
      if (idx[d]! < shape[d]!) break;
      base -= idx[d]! * strides[d]!;
      idx[d] = 0;
    }
  }
  return out;
}

/** Length and stride of the last axis (1 and 0 for a rank-0 view, so it reads as a single row of one element). */
export function lastAxis(view: StridedView): { readonly length: number; readonly stride: number } {
  const r = view.shape.length;
  return r === 0 ? { length: 1, stride: 0 } : { length: view.shape[r - 1]!, stride: view.strides[r - 1]! };
}

// The one stride that walks every row of [..., K]: written once in @attngraph/tensor for every executor.
export { leadingStride } from "@attngraph/tensor";
