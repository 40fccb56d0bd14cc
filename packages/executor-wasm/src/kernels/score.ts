// score: raw Q·Kᵀ per batch and head, before scale and mask. q and k are usually transposed views; the module packs
// Kᵀ into panels and reads q's rows in place (q is copied only when its last axis is strided). With a signal, a big
// call runs in chunks of query rows (chunks.ts).
import { chunkedKernel } from "../chunks.js";
import { requireInput } from "./adapter.js";
import { headProducts } from "./head-products.js";
import { matmul } from "./matmul.js";

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]; query head h uses key head ⌊h / (H / Hkv)⌋. */
export const scoreKernel = chunkedKernel((call, ctx) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const nd = q.shape[3]!;
  const ns = k.shape[2]!;
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  return headProducts(call, ctx, q, "q", k, ns, ({ b, rightHead, rows, a, c }) => {
    const kt = { address: k.address + (b * ks0 + rightHead * ks1) * 4, rowStride: ks3, colStride: ks2 }; // Kᵀ [D, S]
    matmul(ctx, rows, ns, nd, a, kt, c, ns, undefined, call.node);
  });
});
