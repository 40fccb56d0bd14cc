import type { OpLowering } from "../lowering.js";

/** relu: ONNX Relu, max(x, 0), as torch.onnx writes nn.ReLU (the model imports opset 17). */
export const relu: OpLowering = (l) => l.emit("Relu", [l.required("x")]);
