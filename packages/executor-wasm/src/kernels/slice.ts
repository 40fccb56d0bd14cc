// slice: `size` entries of one axis from `start` (torch.narrow), as a view; how a fused QKV projection is split.
import { sliceStart, type SliceAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrsOf, viewInput } from "./adapter.js";

/** Input: x; attrs { axis (negative counts from the end), start, size } → x with dim `axis` = size. */
export const sliceKernel: WasmKernel = (call, ctx) => {
  const x = viewInput(call);
  const { axis, start, size } = attrsOf<SliceAttrs>(call);
  const a = axis < 0 ? axis + x.rank : axis;
  // An empty slice keeps the base offset: start · stride may point past the block when start equals the dim.
  const first = sliceStart(start, x.shape[a]!);
  return ctx.view(x, call.outShape, x.strides, size === 0 ? x.offset : x.offset + first * x.strides[a]!);
};
