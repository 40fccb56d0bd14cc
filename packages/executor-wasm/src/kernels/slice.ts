// slice: `size` entries of one axis from `start` (torch.narrow), as a view; how a fused QKV projection is split.
import type { SliceAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrError, requireInput } from "./adapter.js";

/** Input: x; attrs { axis (negative counts from the end), start, size } → x with dim `axis` = size. */
export const sliceKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { axis, start, size } = call.attrs as Partial<SliceAttrs>;
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
  // An empty slice keeps the base offset: start · stride may point past the block when start equals the dim.
  return ctx.view(x, shape, x.strides, size === 0 ? x.offset : x.offset + start! * x.strides[a]!);
};
