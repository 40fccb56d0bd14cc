// score: raw Q·Kᵀ per batch and head, before scale and mask. q and k are usually transposed views; the module packs
// Kᵀ into panels and reads q's rows in place (q is copied only when its last axis is strided). With a signal, a big
// call runs in chunks of query rows (chunks.ts).
import { withCleanup } from "@attngraph/graph";
import { chunkedKernel, headRows, overRows } from "../chunks.js";
import { requireInput, fillingChunked } from "./adapter.js";
import { matmul } from "./matmul.js";

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]; query head h uses key head ⌊h / (H / Hkv)⌋. */
export const scoreKernel = chunkedKernel((call, ctx) => {
  const q0 = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const [nb, nh, nl, nd] = q0.shape as [number, number, number, number];
  const ns = k.shape[2]!;
  const out = ctx.output(call, [nb, nh, nl, ns]);
  return fillingChunked(call, ctx, out, () => {
    const copied = q0.strides[3] === 1 || nd <= 1 ? undefined : ctx.dense(q0, `${call.node} (dense copy of q)`).value;
    const q = copied ?? q0;
    const group = nh / Math.max(1, k.shape[1]!);
    const [qs0, qs1, qs2] = q.strides as [number, number, number, number];
    const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
    // Rows of [B · H · L] are independent: a chunk is the same per-head matmuls over its rows.
    const part = (r0: number, r1: number) =>
      headRows(r0, r1, nl, (bh, i0, i1) => {
        const b = Math.floor(bh / nh);
        const kh = Math.floor((bh - b * nh) / group);
        const a = { address: q.address + (b * qs0 + (bh - b * nh) * qs1 + i0 * qs2) * 4, rowStride: qs2, colStride: 1 }; // [L, D]
        const kt = { address: k.address + (b * ks0 + kh * ks1) * 4, rowStride: ks3, colStride: ks2 }; // Kᵀ [D, S]
        matmul(ctx, i1 - i0, ns, nd, a, kt, out.address + (bh * nl + i0) * ns * 4, ns, undefined, call.node);
      });
    return withCleanup(
      () => overRows(call, ctx, nb * nh * nl, ns * nd, part),
      () => copied && ctx.release(copied),
    );
  });
});
