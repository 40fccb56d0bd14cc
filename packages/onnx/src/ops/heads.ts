// Batched matmuls over heads where key/value heads are shared by groups of query heads (GQA/MQA): query head h reads
// key head h / (H / Hkv). The query side is viewed as [B, Hkv, G, L, ·] and the key side as [B, Hkv, 1, ·, ·], so
// MatMul's broadcasting shares each key head across its group without copying it, then [B, Hkv, G, L, ·] is viewed as
// [B, H, L, ·] again. With H = Hkv it is one plain MatMul.
import { sameDim } from "@attngraph/graph";
import type { Lowering } from "../lowering.js";

/**
 * left [B, H, L, K] · right [B, Hkv, K, N] → [B, H, L, N], right's head h / (H / Hkv) serving left's head h.
 * `heads` and `kvHeads` are the attngraph dims of H and Hkv (equal dims need no grouping).
 */
export function groupedMatMul(
  l: Lowering,
  left: string,
  right: string,
  heads: string | number,
  kvHeads: string | number,
): string {
  if (sameDim(heads, kvHeads)) return l.emit("MatMul", [left, right]);
  const grouped = l.emit("Reshape", [
    left,
    l.shape([{ of: left, axis: 0 }, { of: right, axis: 1 }, -1, { of: left, axis: 2 }, { of: left, axis: 3 }]),
  ]); // [B, Hkv, G, L, K]
  const shared = l.emit("Unsqueeze", [right, l.constant("int64", [2])]); // [B, Hkv, 1, K, N]
  const product = l.emit("MatMul", [grouped, shared]); // [B, Hkv, G, L, N]
  return l.emit("Reshape", [
    product,
    l.shape([
      { of: left, axis: 0 },
      { of: left, axis: 1 },
      { of: left, axis: 2 },
      { of: right, axis: 3 },
    ]),
  ]); // [B, H, L, N]
}

/** q [B, H, L, D], k [B, Hkv, S, D] → q · kᵀ [B, H, L, S]. */
export function scores(
  l: Lowering,
  q: string,
  k: string,
  qShape: readonly (string | number)[],
  kShape: readonly (string | number)[],
): string {
  const kT = l.emit("Transpose", [k], { perm: [0, 1, 3, 2] }); // [B, Hkv, D, S]
  return groupedMatMul(l, q, kT, qShape[1]!, kShape[1]!);
}
