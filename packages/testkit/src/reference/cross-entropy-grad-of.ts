// crossEntropyGrad64 (backward64.ts) on tensors as the cross-entropy-grad op takes them, which is how the cpu and wasm
// kernel tests check their kernels: logits [..., V] and targets [...] in any layout, an optional loss gradient.
import type { Tensor } from "@attngraph/tensor";
import { crossEntropyGrad64 } from "./backward64.js";

const f64 = (t: Tensor): Float64Array => Float64Array.from(t.toFloat32Array());

/** The logits gradient in float64, row-major [..., V]; like crossEntropyGrad64, a target out of [0, V) throws. */
export function crossEntropyGradOf(
  logits: Tensor,
  targets: Tensor<"int32">,
  reduction: "mean" | "sum" | "none",
  ignoreIndex: number | null,
  grad?: Tensor,
): Float64Array {
  const v = logits.shape[logits.rank - 1]!;
  return crossEntropyGrad64(f64(logits), v, targets.toInt32Array(), reduction, ignoreIndex, grad && f64(grad));
}
