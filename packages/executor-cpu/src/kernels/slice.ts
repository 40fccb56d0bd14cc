// slice: `size` entries of one axis from `start` (torch.narrow), as a view. This is how a fused QKV projection is
// split into queries, keys and values without copying.
import { sliceStart, type SliceAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { requireInput, toTensor, attrsOf } from "./adapter.js";
import type { StridedView } from "./strided.js";

/** The view of x[..., start:start+size, ...] along `axis` (already normalised to 0..rank-1, in range). */
export function sliceImpl(x: StridedView, axis: number, start: number, size: number): StridedView {
  const stride = x.strides[axis]!;
  return {
    data: x.data,
    shape: x.shape.map((d, i) => (i === axis ? size : d)),
    strides: x.strides,
    // An empty slice keeps the base offset: start * stride may point past the buffer when start equals the dim.
    offset: size === 0 ? x.offset : x.offset + start * stride,
  };
}

/** Input: x; attrs { axis (negative counts from the end), start, size } → x with dim `axis` = size. */
export const sliceKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  const { axis, start, size } = attrsOf<SliceAttrs>(call);
  const a = axis < 0 ? axis + x.rank : axis;
  return toTensor(sliceImpl(x, a, sliceStart(start, x.shape[a]!), size));
};
