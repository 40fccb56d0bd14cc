// weighted-sum: attention weights · V per batch and head; value heads shared across query heads like keys.
// A weight of exactly 0 (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row
// (FlashAttention semantics, as the fused kernel): a value head holding a non-finite number takes the module's
// `matmulSkipZero` instead of the tiled matmul, which would compute 0 · NaN = NaN. Checking V costs S · D per value head.
import type { WasmKernel } from "../executor.js";
import { expectDim, expectHeadGroups, expectRank, requireInput, filling } from "./adapter.js";
import { matmul } from "./matmul.js";

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel: WasmKernel = (call, ctx) => {
  const w0 = requireInput(call, 0, "weights");
  const v = requireInput(call, 1, "v");
  expectRank(call, "weights", w0, 4, "[B, H, L, S]");
  expectRank(call, "v", v, 4, "[B, Hkv, S, D]");
  const [nb, nh, nl, ns] = w0.shape as [number, number, number, number];
  expectDim(call, "v", "batch B of values must match the weights", nb, v.shape[0]!, v);
  expectHeadGroups(call, "v", nh, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", ns, v.shape[2]!, v);
  const nd = v.shape[3]!;
  const out = ctx.output(call, [nb, nh, nl, nd]);
  return filling(call, ctx, out, () => {
    const copied = w0.strides[3] === 1 || ns <= 1 ? undefined : ctx.dense(w0, `${call.node} (dense copy of weights)`).value;
    const w = copied ?? w0;
    try {
      const group = nh / Math.max(1, v.shape[1]!);
      const [ws0, ws1, ws2] = w.strides as [number, number, number, number];
      const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
      for (let b = 0; b < nb; b++) {
        let checked = -1; // the value head `finite` was computed for (h runs in order, so vh only grows)
        let finite = true;
        for (let h = 0; h < nh; h++) {
          const vh = Math.floor(h / group);
          const a = { address: w.address + (b * ws0 + h * ws1) * 4, rowStride: ws2, colStride: 1 }; // [L, S]
          const vv = { address: v.address + (b * vs0 + vh * vs1) * 4, rowStride: vs2, colStride: vs3 }; // [S, D]
          const c = out.address + (b * nh + h) * nl * nd * 4;
          if (vh !== checked) {
            finite = ctx.exports.allFinite(vv.address, vs2, vs3, ns, nd) !== 0;
            checked = vh;
          }
          if (finite) matmul(ctx, nl, nd, ns, a, vv, c, nd, undefined, call.node);
          else ctx.exports.matmulSkipZero(nl, nd, ns, a.address, ws2, vv.address, vs2, vs3, c, nd);
        }
      }
    } finally {
      if (copied) ctx.release(copied);
    }
  });
};
