import type { OpLowering } from "../lowering.js";

/** add: a + b with NumPy broadcasting, which ONNX Add has too. */
export const add: OpLowering = (l) => l.emit("Add", [l.required("a"), l.required("b")]);
