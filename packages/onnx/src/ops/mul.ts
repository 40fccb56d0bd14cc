import type { OpLowering } from "../lowering.js";

/** mul: a · b with NumPy broadcasting, which ONNX Mul has too. */
export const mul: OpLowering = (l) => l.emit("Mul", [l.required("a"), l.required("b")]);
