// x · Wᵀ (+ b), nn.Linear layout, shared by projection, out-proj and linear-gelu. The weight is transposed by a
// Transpose node rather than stored transposed: the initializer keeps the graph's name and layout (a tied weight may
// be read untransposed elsewhere), and onnxruntime folds a Transpose of an initializer at load time.
import type { Lowering } from "../lowering.js";

/** The pre-activation MatMul(x, Wᵀ), and the bias apart, so a caller may fuse the bias into a contrib op. */
export function matmulWeightT(l: Lowering): string {
  const wT = l.emit("Transpose", [l.required("weight")], { perm: [1, 0] }); // [In, Out]
  return l.emit("MatMul", [l.required("x"), wT]); // [..., Out]
}

/** x [..., In], weight [Out, In], bias [Out] → [..., Out]. */
export function linear(l: Lowering): string {
  const y = matmulWeightT(l);
  const bias = l.input("bias");
  return bias === undefined ? y : l.emit("Add", [y, bias]);
}
