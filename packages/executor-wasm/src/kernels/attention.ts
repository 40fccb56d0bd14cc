// attention: score → mask → softmax → dropout → weighted-sum fused in the module (FlashAttention-style streaming over
// key blocks with a running max and sum; key blocks a causal or window mask hides from a whole query block are
// skipped). Attributes, padding and dropout are checked as the unfused kernels check theirs.
import type { AttentionAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import {
  checkDropoutAttrs,
  checkKeyPadding,
  checkMaskAttrs,
  checkScale,
  dropoutThreshold,
  expectDim,
  expectHeadGroups,
  expectRank,
  filling,
  fmix32,
  maskOffset,
  optionalInput,
  requireInput,
  windowOf,
  type Call,
} from "./adapter.js";

const ATTENTION_DROPOUT_FIELDS = { rate: "dropoutRate", seed: "dropoutSeed", training: "training" } as const;
const NO_DROPOUT = { rate: 0, seed: 0, training: false } as const;

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], optional keyPaddingMask [B, S] → [B, H, L, Dv];
 * attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training }. Weight [b, h, i, j] is dropped
 * exactly when the dropout kernel drops element ((b · H + h) · L + i) · S + j of the weights tensor.
 */
export const attentionKernel: WasmKernel = (call, ctx) => {
  const q0 = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const v = requireInput(call, 2, "v");
  const pad = optionalInput(call, 3, "keyPaddingMask");
  const attrs = checkAttrs(call);
  expectRank(call, "q", q0, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  expectRank(call, "v", v, 4, "[B, Hkv, S, Dv]");
  const [nb, nh, nl, nd] = q0.shape as [number, number, number, number];
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const ndv = v.shape[3]!;
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, nhkv, k);
  expectDim(call, "k", "head dim D of keys must match the queries", nd, k.shape[3]!, k);
  expectDim(call, "v", "batch B of values must match the queries", nb, v.shape[0]!, v);
  expectDim(call, "v", "values must have as many heads Hkv as keys", nhkv, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", ns, v.shape[2]!, v);
  if (pad !== undefined) checkKeyPadding(call, ctx, pad, nb, ns, "queries");
  const out = ctx.output(call, [nb, nh, nl, ndv]);
  if (out.size === 0) return out;
  // The module reads q's rows in place; a q strided along D is made dense first.
  return filling(call, ctx, out, () => {
    const copied = q0.strides[3] === 1 || nd <= 1 ? undefined : ctx.dense(q0, `${call.node} (dense copy of q)`).value;
    const q = copied ?? q0;
    try {
      const scratch = ctx.scratch(ctx.exports.attentionScratchBytes(ns, nd, ndv), call.node);
      const dropping = attrs.training && attrs.dropoutRate > 0;
      const [qs0, qs1, qs2] = q.strides as [number, number, number, number];
      const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
      const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
      const [ps0, ps1] = pad === undefined ? [0, 0] : (pad.strides as [number, number]);
      ctx.exports.attention(
        q.address, qs0, qs1, qs2,
        k.address, ks0, ks1, ks2, ks3,
        v.address, vs0, vs1, vs2, vs3,
        pad?.address ?? 0, ps0, ps1,
        nb, nh, nhkv, nl, ns, nd, ndv,
        attrs.causal ? 1 : 0, maskOffset(attrs.alignment, nl, ns), windowOf(attrs), attrs.scale,
        dropping ? 1 : 0, fmix32(attrs.dropoutSeed), dropoutThreshold(attrs.dropoutRate), dropping ? Math.fround(1 / (1 - attrs.dropoutRate)) : 1,
        out.address, scratch,
      );
    } finally {
      if (copied) ctx.release(copied);
    }
  });
};

function checkAttrs(call: Call): AttentionAttrs {
  const mask = checkMaskAttrs(call);
  const scale = checkScale(call);
  const dropout = checkDropoutAttrs(call, ATTENTION_DROPOUT_FIELDS, NO_DROPOUT);
  return { ...mask, scale, dropoutRate: dropout.rate, dropoutSeed: dropout.seed, training: dropout.training };
}
