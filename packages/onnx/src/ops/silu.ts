import type { OpLowering } from "../lowering.js";

/** silu: x · Sigmoid(x), as torch.onnx writes F.silu at opset 17 (there is no Swish op before opset 22). */
export const silu: OpLowering = (l) => {
  const x = l.required("x");
  return l.emit("Mul", [x, l.emit("Sigmoid", [x])]);
};
