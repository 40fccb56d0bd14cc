import type { ReshapeAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/**
 * reshape: the target names symbolic dims, which the model reads off the graph inputs at run time. allowzero = 1
 * because a 0 in the target is an empty axis, never ONNX's "copy this dim from the input".
 */
export const reshape: OpLowering = (l) => {
  const { shape } = l.node.attrs as unknown as ReshapeAttrs;
  return l.emit("Reshape", [l.required("x"), l.shape(shape)], { allowzero: 1 });
};
