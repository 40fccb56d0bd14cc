import type { PadAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/** pad: zeros before and after x along one axis, as Pad in constant mode (pads: every axis's begins, then ends). */
export const pad: OpLowering = (l) => {
  const { axis, before, after } = l.node.attrs as unknown as PadAttrs;
  const rank = l.shapeOf("x").length;
  const a = axis < 0 ? axis + rank : axis;
  const pads = [
    ...Array.from({ length: rank }, (_, i) => (i === a ? before : 0)),
    ...Array.from({ length: rank }, (_, i) => (i === a ? after : 0)),
  ];
  return l.emit("Pad", [l.required("x"), l.constant("int64", pads), l.constant("float", [0], [])]);
};
