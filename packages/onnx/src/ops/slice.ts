import type { SliceAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/**
 * slice: `size` entries of one axis from `start` (torch.narrow), as Slice with one axis. A negative start counts from
 * the end in both; a slice that ends at the end (start + size = 0) has Slice's "to the end" as its end, not 0.
 */
export const slice: OpLowering = (l) => {
  const { axis, start, size } = l.node.attrs as unknown as SliceAttrs;
  const end = start < 0 && start + size === 0 ? Number.MAX_SAFE_INTEGER : start + size;
  return l.emit("Slice", [
    l.required("x"),
    l.constant("int64", [start]),
    l.constant("int64", [end]),
    l.constant("int64", [axis]),
  ]);
};
