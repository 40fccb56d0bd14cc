// softmax(scale · x) over the last axis as the cpu kernel defines it, shared by softmax and the fused attention. ONNX
// Softmax alone differs in two places: a row whose entries are all −∞ (every key masked) gives NaN where attngraph
// gives zeros, and with a scale <= 0 a −∞ entry would become NaN or +∞ where attngraph gives it weight 0. So −∞ entries
// are found first (IsInf), kept −∞ through the scaling, and their weights set to exactly 0 after the Softmax, which also
// turns a fully masked row into zeros.
import type { Lowering } from "../lowering.js";

/** x [..., S] → softmax(scale · x) [..., S]; −∞ entries get weight 0, a row of them all zeros. */
export function maskedSoftmax(l: Lowering, x: string, scale: number): string {
  const masked = l.emit("IsInf", [x], { detect_positive: 0 });
  let scaled = scale === 1 ? x : l.emit("Mul", [x, l.constant("float", [scale], [])]);
  if (scale <= 0) scaled = l.emit("Where", [masked, l.constant("float", [-Infinity], []), scaled]);
  const y = l.emit("Softmax", [scaled], { axis: -1 });
  return l.emit("Where", [masked, l.constant("float", [0], []), y]);
}
