// A view read as a larger broadcast shape: strides 0 on the axes it stretches, so nothing is materialised.
import { broadcastStrides } from "@attngraph/graph";
import type { StridedView } from "./strided.js";

/** `view` seen as `shape` (which it must broadcast to; the caller has checked). */
export function broadcastView(view: StridedView, shape: readonly number[]): StridedView {
  return { data: view.data, shape, strides: broadcastStrides(view.shape, view.strides, shape), offset: view.offset };
}
