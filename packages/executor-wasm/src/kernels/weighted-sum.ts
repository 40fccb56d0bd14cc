// weighted-sum: attention weights · V per batch and head; value heads shared across query heads like keys.
// A weight of exactly 0 (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row
// (FlashAttention semantics, as the fused kernel): a value head holding a non-finite number takes the module's
// `matmulSkipZero` instead of the tiled matmul, which would compute 0 · NaN = NaN. Checking V costs S · D per value head.
// With a signal, a big call runs in chunks of query rows (chunks.ts).
import { chunkedKernel } from "../chunks.js";
import { requireInput } from "./adapter.js";
import { headProducts } from "./head-products.js";
import { matmul } from "./matmul.js";
import { MATMUL_PARAMS_BYTES, writeMatmulParams } from "./matmul-params.js";

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel = chunkedKernel((call, ctx) => {
  const w = requireInput(call, 0, "weights");
  const v = requireInput(call, 1, "v");
  const ns = w.shape[3]!;
  const nhkv = v.shape[1]!;
  const nd = v.shape[3]!;
  const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
  let checked = -1; // the (batch, value head) `finite` was computed for (heads run in order, so it only grows)
  let finite = true;
  return headProducts(call, ctx, w, "weights", v, nd, ({ b, rightHead: vh, rows, a, c }) => {
    const vv = { address: v.address + (b * vs0 + vh * vs1) * 4, rowStride: vs2, colStride: vs3 }; // [S, D]
    if (b * nhkv + vh !== checked) {
      finite = ctx.exports.allFinite(vv.address, vs2, vs3, ns, nd) !== 0;
      checked = b * nhkv + vh;
    }
    if (finite) matmul(ctx, rows, nd, ns, a, vv, c, nd, undefined, call.node);
    else {
      const skip = {
        m: rows,
        n: nd,
        k: ns,
        a: a.address,
        lda: a.rowStride,
        b: vv.address,
        brs: vs2,
        bcs: vs3,
        c,
        ldc: nd,
      };
      ctx.exports.matmulSkipZero(writeMatmulParams(ctx, ctx.scratch(MATMUL_PARAMS_BYTES, call.node), skip));
    }
  });
});
