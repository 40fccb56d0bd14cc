// Float64 references of the fused attention backward (attention-lse, attention-grad), composed from the unfused chain's
// references: score → mask → softmax → dropout → weighted-sum forward, then the chain's backward rules in reverse
// (weighted-sum, dropout, softmax-grad, mask-grad, score). The fused kernels recompute weights from the saved lse; this
// file never does, so agreeing with it means "the fused backward equals the unfused one".
// Legend: B batch, H heads, Hkv kv heads, L queries, S keys, D head dim of q and k, Dv head dim of v.
import { referenceDropoutKeep } from "./dropout64.js";
import { eachQueryRow, mask64, score64, softmax64, weightedSum64, type AttentionDims64, type Mask64 } from "./ops64.js";
import { maskGrad64, softmaxGrad64 } from "./backward64.js";

export interface AttentionProblem64 {
  /** [B, H, L, D] */
  readonly q: Float64Array;
  /** [B, Hkv, S, D] */
  readonly k: Float64Array;
  /** [B, Hkv, S, Dv] */
  readonly v: Float64Array;
  /** [B, S] of 0/1, 1 = padded key */
  readonly pad?: Float64Array;
  readonly dims: AttentionDims64;
  readonly mask: Mask64;
  readonly scale: number;
  /** Training-mode dropout on the weights (element index ((b·H + h)·L + i)·S + j); absent = none. */
  readonly dropout?: { readonly rate: number; readonly seed: number };
}

/** The chain's forward values: masked scores and softmax weights [B, H, L, S] before dropout, the keep factors, out. */
function forward(p: AttentionProblem64): {
  masked: Float64Array;
  probs: Float64Array;
  keep: Float64Array;
  weights: Float64Array;
  out: Float64Array;
} {
  const { B, H, Hkv, L, S, D, Dv } = p.dims;
  const masked = mask64(score64(p.q, p.k, { B, H, Hkv, L, S, D }), B, H, L, S, p.mask, p.pad);
  const probs = softmax64(masked, S, p.scale);
  const keep = new Float64Array(probs.length).fill(1);
  if (p.dropout && p.dropout.rate > 0) {
    const factor = Math.fround(1 / (1 - p.dropout.rate));
    for (let e = 0; e < keep.length; e++)
      keep[e] = referenceDropoutKeep(p.dropout.seed, e, p.dropout.rate) ? factor : 0;
  }
  const weights = probs.map((w, e) => w * keep[e]!);
  const out = weightedSum64(weights, p.v, { B, H, Hkv, L, S, D: Dv });
  return { masked, probs, keep, weights, out };
}

/** The forward output [B, H, L, Dv]: dropout(softmax(scale · mask(q·kᵀ))) · v. */
export function attentionOut64(p: AttentionProblem64): Float64Array {
  return forward(p).out;
}

/** lse [B, H, L]: log Σ exp(scale · q_i·k_j) over the keys row i sees, −∞ for a row that sees none. */
export function attentionLse64(p: Omit<AttentionProblem64, "v" | "dropout">): Float64Array {
  const { B, H, Hkv, L, S, D } = p.dims;
  const masked = mask64(score64(p.q, p.k, { B, H, Hkv, L, S, D }), B, H, L, S, p.mask, p.pad);
  const out = new Float64Array(B * H * L);
  for (let r = 0; r < out.length; r++) {
    let max = -Infinity;
    for (let j = 0; j < S; j++) max = Math.max(max, p.scale * masked[r * S + j]!);
    if (max === -Infinity) {
      out[r] = -Infinity;
      continue;
    }
    let sum = 0;
    for (let j = 0; j < S; j++) sum += Math.exp(p.scale * masked[r * S + j]! - max);
    out[r] = max + Math.log(sum);
  }
  return out;
}

/**
 * dq [B, H, L, D], dk [B, Hkv, S, D], dv [B, Hkv, S, Dv] of Σ grad ⊙ out, by the unfused chain's rules. Key and value
 * gradients sum over the query heads that share a kv head. A weight of exactly 0 (hidden, dropped) contributes nothing
 * to dv, and a score gradient of exactly 0 nothing to dk and dq, as weighted-sum skips zero weights.
 */
export function attentionGrad64(
  p: AttentionProblem64,
  grad: Float64Array,
): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const { B, H, Hkv, L, S, D, Dv } = p.dims;
  const f = forward(p);
  const dWeights = score64(grad, p.v, { B, H, Hkv, L, S, D: Dv }); // grad · vᵀ
  const dProbs = dWeights.map((g, e) => g * f.keep[e]!);
  const dScores = maskGrad64(softmaxGrad64(f.probs, dProbs, S, p.scale), f.masked, 1);
  const dq = weightedSum64(dScores, p.k, { B, H, Hkv, L, S, D });
  const dk = new Float64Array(B * Hkv * S * D);
  const dv = new Float64Array(B * Hkv * S * Dv);
  eachQueryRow(p.dims, (row, kv0) => {
    for (let j = 0; j < S; j++) {
      const kv = kv0 + j;
      const ds = dScores[row * S + j]!;
      if (ds !== 0) for (let d = 0; d < D; d++) dk[kv * D + d]! += ds * p.q[row * D + d]!;
      const w = f.weights[row * S + j]!;
      if (w !== 0) for (let d = 0; d < Dv; d++) dv[kv * Dv + d]! += w * grad[row * Dv + d]!;
    }
  });
  return { dq, dk, dv };
}
