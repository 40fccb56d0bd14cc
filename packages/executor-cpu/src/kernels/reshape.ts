// reshape: a view with a new shape where the layout allows one, else a copy (torch.reshape). The view-or-copy rule
// lives in Tensor.reshape only, so every executor's host side agrees on when a copy happens.
import type { Shape } from "@attngraph/tensor";
import { checkReshapeSize } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { requireInput, toTensor } from "./adapter.js";
import type { StridedView } from "./strided.js";

/** x viewed (or, when the strides forbid a view, copied) with `shape`, which has the same element count. */
export function reshapeImpl(x: StridedView, shape: Shape): StridedView {
  return toTensor(x).reshape(shape);
}

/**
 * Input: x → `call.outShape` (the concrete shape the graph bound from `attrs.shape`, whose names are symbolic dims,
 * e.g. split heads [B, L, E] → [B, L, H, D]).
 */
export const reshapeKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  checkReshapeSize(call, x);
  return toTensor(reshapeImpl(x, call.outShape));
};
