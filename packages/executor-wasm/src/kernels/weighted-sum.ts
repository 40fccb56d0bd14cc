// weighted-sum: attention weights · V per batch and head; value heads shared across query heads like keys.
// A weight of exactly 0 (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row
// (FlashAttention semantics, as the fused kernel): a value head holding a non-finite number takes the module's
// `matmulSkipZero` instead of the tiled matmul, which would compute 0 · NaN = NaN. Checking V costs S · D per value head.
// With a signal, a big call runs in chunks of query rows (chunks.ts).
import { withCleanup } from "@attngraph/graph";
import { chunkedKernel, headRows, overRows } from "../chunks.js";
import { requireInput, fillingChunked } from "./adapter.js";
import { matmul } from "./matmul.js";
import { MATMUL_PARAMS_BYTES, writeMatmulParams } from "./matmul-params.js";

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel = chunkedKernel((call, ctx) => {
  const w0 = requireInput(call, 0, "weights");
  const v = requireInput(call, 1, "v");
  const [nb, nh, nl, ns] = w0.shape as [number, number, number, number];
  const nd = v.shape[3]!;
  const out = ctx.output(call, [nb, nh, nl, nd]);
  return fillingChunked(call, ctx, out, () => {
    const copied =
      w0.strides[3] === 1 || ns <= 1 ? undefined : ctx.dense(w0, `${call.node} (dense copy of weights)`).value;
    const w = copied ?? w0;
    const nhkv = v.shape[1]!;
    const group = nh / Math.max(1, nhkv);
    const [ws0, ws1, ws2] = w.strides as [number, number, number, number];
    const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
    let checked = -1; // the (batch, value head) `finite` was computed for (heads run in order, so it only grows)
    let finite = true;
    // Rows of [B · H · L] are independent: a chunk is the same per-head products over its rows.
    const part = (r0: number, r1: number) =>
      headRows(r0, r1, nl, (bh, i0, i1) => {
        const b = Math.floor(bh / nh);
        const h = bh - b * nh;
        const vh = Math.floor(h / group);
        const a = { address: w.address + (b * ws0 + h * ws1 + i0 * ws2) * 4, rowStride: ws2, colStride: 1 }; // [L, S]
        const vv = { address: v.address + (b * vs0 + vh * vs1) * 4, rowStride: vs2, colStride: vs3 }; // [S, D]
        const c = out.address + (bh * nl + i0) * nd * 4;
        if (b * nhkv + vh !== checked) {
          finite = ctx.exports.allFinite(vv.address, vs2, vs3, ns, nd) !== 0;
          checked = b * nhkv + vh;
        }
        if (finite) matmul(ctx, i1 - i0, nd, ns, a, vv, c, nd, undefined, call.node);
        else {
          const skip = {
            m: i1 - i0,
            n: nd,
            k: ns,
            a: a.address,
            lda: ws2,
            b: vv.address,
            brs: vs2,
            bcs: vs3,
            c,
            ldc: nd,
          };
          ctx.exports.matmulSkipZero(writeMatmulParams(ctx, ctx.scratch(MATMUL_PARAMS_BYTES, call.node), skip));
        }
      });
    return withCleanup(
      () => overRows(call, ctx, nb * nh * nl, ns * nd, part),
      () => copied && ctx.release(copied),
    );
  });
});
