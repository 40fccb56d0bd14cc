// pad: zeros before and after x along one axis, the gradient of a slice (the queries' gradient padded out to the width
// of a fused QKV projection's output, where the keys' and values' gradients are added).
import type { Shape } from "@attngraph/tensor";
import type { CpuKernel } from "../executor.js";
import type { PadAttrs } from "@attngraph/graph";
import { outData, requireInput, result, attrsOf } from "./adapter.js";
import { lastAxis, rowOffsets, type StridedView } from "./strided.js";

/** x's shape with `before + d + after` along `axis`. */
export function padShape(shape: Shape, axis: number, before: number, after: number): number[] {
  return shape.map((d, i) => (i === axis ? before + d + after : d));
}

/**
 * Zeros, then x copied into its place: the output seen through a view of x's shape that starts `before` steps along
 * the axis, so one row-by-row copy writes x wherever the axis is (last, middle or first).
 * @param x [...], any strides
 * @param axis already normalised to 0..rank-1
 * @param out where to write the padded shape row-major; default: a new array. Holds garbage: every element is written.
 */
export function padImpl(x: StridedView, axis: number, before: number, after: number, out?: Float32Array): Float32Array {
  const shape = padShape(x.shape, axis, before, after);
  const size = shape.reduce((a, b) => a * b, 1);
  const y = out ?? new Float32Array(size);
  if (out !== undefined) y.fill(0);
  const strides = new Array<number>(shape.length);
  for (let d = shape.length - 1, s = 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d]!;
  }
  const inner: StridedView = { data: y, shape: x.shape, strides, offset: before * strides[axis]! };
  const src = rowOffsets(x);
  const dst = rowOffsets(inner);
  const { length: n, stride: xs } = lastAxis(x);
  const ys = strides[shape.length - 1]!;
  const xd = x.data;
  for (let r = 0; r < src.length; r++) {
    for (let j = 0, p = src[r]!, q = dst[r]!; j < n; j++, p += xs, q += ys) y[q] = xd[p]!;
  }
  return y;
}

/** Input: x [...] (rank >= 1); attrs { axis (negative counts from the end), before, after } → x padded along axis. */
export const padKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  const { axis, before, after } = attrsOf<PadAttrs>(call);
  const a = axis < 0 ? axis + x.rank : axis;
  const shape = padShape(x.shape, a, before, after);
  return result(call, padImpl(x, a, before, after, outData(call, shape)), shape);
};
