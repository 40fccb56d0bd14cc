import type { TransposeAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/** transpose: output dim i is input dim perm[i], as ONNX Transpose's perm. */
export const transpose: OpLowering = (l) =>
  l.emit("Transpose", [l.required("x")], { perm: [...(l.node.attrs as unknown as TransposeAttrs).perm] });
