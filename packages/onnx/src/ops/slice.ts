import type { SliceAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/** slice: `size` entries of one axis from `start` (torch.narrow), as Slice with one axis. */
export const slice: OpLowering = (l) => {
  const { axis, start, size } = l.node.attrs as unknown as SliceAttrs;
  return l.emit("Slice", [
    l.required("x"),
    l.constant("int64", [start]),
    l.constant("int64", [start + size]),
    l.constant("int64", [axis]),
  ]);
};
