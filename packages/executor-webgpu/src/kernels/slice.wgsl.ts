// slice: `size` entries of one axis from `start` (torch.narrow) as a view; this is how a fused QKV projection is split
// into queries, keys and values without a copy.
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";
import { attrError } from "@attngraph/graph";

/** Input: x; attrs { axis (negative from the end), start, size } → x narrowed along axis, a view. */
export const sliceKernel: WebGpuKernel = (call, gpu) => {
  const x = input(call, 0); // a view keeps the dtype of what it views
  const { axis, start, size } = call.attrs as { axis?: number; start?: number; size?: number };
  const r = x.rank;
  if (!Number.isInteger(axis) || axis! < -r || axis! >= r)
    throw attrError(call, "axis", `an integer in -${r}..${r - 1}`, axis);
  const a = axis! < 0 ? axis! + r : axis!;
  const dim = x.shape[a]!;
  if (!Number.isInteger(start) || start! < 0 || start! > dim)
    throw attrError(call, "start", `an integer in 0..${dim}`, start);
  if (!Number.isInteger(size) || size! < 0 || start! + size! > dim)
    throw attrError(call, "size", `an integer with start + size <= ${dim}`, size);
  const shape = x.shape.map((d, i) => (i === a ? size! : d));
  return gpu.view(x, shape, x.strides, size === 0 ? x.offset : x.offset + start! * x.strides[a]!);
};
