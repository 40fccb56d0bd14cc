// score: raw Q·Kᵀ per batch and head, before scale and mask (the `scores` tap point). q and k are usually transposed
// views ([B, L, H, D] permuted to [B, H, L, D]); the matmul core packs them into its reused scratch panels, no tensor copy.
import type { CpuKernel } from "../executor.js";
import { expectDim, expectHeadGroups, expectRank, outData, requireInput, result } from "./adapter.js";
import { matmul } from "./matmul.js";
import type { StridedView } from "./strided.js";

/**
 * scores[b, h, l, s] = Σ_d q[b, h, l, d] · k[b, h / (H / Hkv), s, d], float64 accumulation, not scaled: one blocked
 * matmul per batch and head, Kᵀ being k with its strides swapped. Grouped-query attention indexes the shared key head
 * instead of materialising repeated keys. Shapes are not checked here (the adapter does).
 * @param q [B, H, L, D], any strides
 * @param k [B, Hkv, S, D], any strides; Hkv divides H
 * @param out where to write [B, H, L, S] row-major; default: a new array
 * @returns [B, H, L, S], row-major (`out` when given)
 */
export function scoreImpl(q: StridedView, k: StridedView, out?: Float32Array): Float32Array {
  const [nb, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const [qs0, qs1, qs2, qs3] = q.strides as [number, number, number, number];
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  const group = nhkv === 0 ? 1 : nh / nhkv; // query heads per key head
  const y = out ?? new Float32Array(nb * nh * nl * ns);
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      const kh = Math.floor(h / group);
      const qh = { data: q.data, offset: q.offset + b * qs0 + h * qs1, rowStride: qs2, colStride: qs3 }; // [L, D]
      const kt = { data: k.data, offset: k.offset + b * ks0 + kh * ks1, rowStride: ks3, colStride: ks2 }; // Kᵀ [D, S]
      matmul(nl, ns, nd, qh, kt, y, (b * nh + h) * nl * ns, ns);
    }
  }
  return y;
}

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]. */
export const scoreKernel: CpuKernel = (call) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  expectRank(call, "q", q, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  const [nb, nh, nl, nd] = q.shape as [number, number, number, number];
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, k.shape[1]!, k);
  expectDim(call, "k", "head dim D of keys must match the queries", nd, k.shape[3]!, k);
  const shape = [nb, nh, nl, k.shape[2]!];
  return result(call, scoreImpl(q, k, outData(call, shape)), shape);
};
