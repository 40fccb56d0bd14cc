// score: raw Q·Kᵀ per batch and head, before scale and mask (the `scores` tap point). q and k are usually transposed
// views ([B, L, H, D] permuted to [B, H, L, D]); the matmul core packs them into its reused scratch panels, no tensor copy.
// With a signal, a big call works in chunks of query rows (chunks.ts).
import { forEachHeadBlock, headProductKernel } from "./head-blocks.js";
import { matmul } from "./matmul.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * scores[b, h, l, s] = Σ_d q[b, h, l, d] · k[b, h / (H / Hkv), s, d], float64 accumulation, not scaled: one blocked
 * matmul per batch and head, Kᵀ being k with its strides swapped. Grouped-query attention indexes the shared key head
 * instead of materialising repeated keys. Shapes are not checked here (the op's shape rule is, before dispatch).
 * @param q [B, H, L, D], any strides
 * @param k [B, Hkv, S, D], any strides; Hkv divides H
 * @param out where to write [B, H, L, S] row-major; default: a new array
 * @param rows the rows of [B · H · L] to compute (each on its own, as in the whole call); default: all
 * @returns [B, H, L, S], row-major (`out` when given)
 */
export function scoreImpl(q: StridedView, k: StridedView, out?: Float32Array, rows?: RowRange): Float32Array {
  const [nb, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  const ns = k.shape[2]!;
  const y = out ?? new Float32Array(nb * nh * nl * ns);
  const [qs2, qs3] = [q.strides[2]!, q.strides[3]!];
  const [ks2, ks3] = [k.strides[2]!, k.strides[3]!];
  forEachHeadBlock(q, k, rows, (qOffset, kOffset, m, row) => {
    const qh = { data: q.data, offset: qOffset, rowStride: qs2, colStride: qs3 }; // [L, D]
    const kt = { data: k.data, offset: kOffset, rowStride: ks3, colStride: ks2 }; // Kᵀ [D, S]
    matmul(m, ns, nd, qh, kt, y, row * ns, ns);
  });
  return y;
}

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]. */
export const scoreKernel = headProductKernel(["q", "k"], 2, scoreImpl);
