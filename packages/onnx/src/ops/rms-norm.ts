import type { RmsNormAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/**
 * rms-norm: LlamaRMSNorm in plain opset-17 ops, as torch.onnx writes it (RMSNormalization only exists from opset 23):
 * x · 1/sqrt(ReduceMean(x · x over the last axis) + eps), times the weight when there is one.
 */
export const rmsNorm: OpLowering = (l) => {
  const x = l.required("x");
  const w = l.input("weight");
  const eps = (l.node.attrs as unknown as RmsNormAttrs).eps;
  const ms = l.emit("ReduceMean", [l.emit("Mul", [x, x])], { axes: [-1], keepdims: 1 }); // [..., 1]; axes is an attribute until opset 18
  const rstd = l.emit("Reciprocal", [l.emit("Sqrt", [l.emit("Add", [ms, l.constant("float", [eps], [])])])]);
  const normed = l.emit("Mul", [x, rstd]);
  return w === undefined ? normed : l.emit("Mul", [normed, w]);
};
