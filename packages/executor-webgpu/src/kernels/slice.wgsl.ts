// slice: `size` entries of one axis from `start` (torch.narrow) as a view; this is how a fused QKV projection is split
// into queries, keys and values without a copy.
import { sliceStart, type SliceAttrs } from "@attngraph/graph";
import type { WebGpuKernel } from "../executor.js";
import { attrsOf, input } from "./inputs.js";

/** Input: x; attrs { axis (negative from the end), start, size } → x narrowed along axis, a view. */
export const sliceKernel: WebGpuKernel = (call, gpu) => {
  const x = input(call, 0); // a view keeps the dtype of what it views
  const { axis, start, size } = attrsOf<SliceAttrs>(call);
  const a = axis < 0 ? axis + x.rank : axis;
  const shape = x.shape.map((d, i) => (i === a ? size : d));
  const first = sliceStart(start, x.shape[a]!);
  return gpu.view(x, shape, x.strides, size === 0 ? x.offset : x.offset + first * x.strides[a]!);
};
