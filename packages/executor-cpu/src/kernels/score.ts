// score: raw Q·Kᵀ per batch and head, before scale and mask (the `scores` tap point). q and k are usually transposed
// views ([B, L, H, D] permuted to [B, H, L, D]); the matmul core packs them into its reused scratch panels, no tensor copy.
// With a signal, a big call works in chunks of query rows (chunks.ts).
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
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
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const [qs0, qs1, qs2, qs3] = q.strides as [number, number, number, number];
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  const group = nhkv === 0 ? 1 : nh / nhkv; // query heads per key head
  const y = out ?? new Float32Array(nb * nh * nl * ns);
  const r0 = rows?.start ?? 0;
  const r1 = rows?.end ?? nb * nh * nl;
  // Each (batch, head) whose rows meet [r0, r1): its rows [i0, i1) of L.
  for (let bh = Math.floor(r0 / Math.max(1, nl)); bh * nl < r1; bh++) {
    const b = Math.floor(bh / nh);
    const h = bh - b * nh;
    const i0 = Math.max(0, r0 - bh * nl);
    const i1 = Math.min(nl, r1 - bh * nl);
    const kh = Math.floor(h / group);
    const qh = { data: q.data, offset: q.offset + b * qs0 + h * qs1 + i0 * qs2, rowStride: qs2, colStride: qs3 }; // [L, D]
    const kt = { data: k.data, offset: k.offset + b * ks0 + kh * ks1, rowStride: ks3, colStride: ks2 }; // Kᵀ [D, S]
    matmul(i1 - i0, ns, nd, qh, kt, y, (bh * nl + i0) * ns, ns);
  }
  return y;
}

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]. */
export const scoreKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const [nb, nh, nl, nd] = q.shape as [number, number, number, number];
  const ns = k.shape[2]!;
  const shape = [nb, nh, nl, ns];
  const y = outData(call, shape) ?? new Float32Array(nb * nh * nl * ns);
  const pending = overRows(call, chunkWork, nb * nh * nl, ns * nd, (start, end) => scoreImpl(q, k, y, { start, end }));
  return afterwards(pending, () => result(call, y, shape));
});
