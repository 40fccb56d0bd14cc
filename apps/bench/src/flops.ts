// FLOPs of one causal multi-head attention forward with an output projection, counting a multiply-add as 2 FLOPs.
//
//   projections   Q, K, V and out_proj: 4 matmuls [b·T, d] × [d, d]        → 4 · 2·b·T·d²
//   attention     scores Q·Kᵀ and weighted sum W·V: per head [T, D]·[D, T]
//                 and [T, T]·[T, D], over all heads (H·D = d)               → 2 · 2·b·T²·d, halved for causal
//
// We use the causal count (the upper triangle of the scores is masked, so it is work no implementation needs to do),
// i.e. flops = 8·b·T·d² + 2·b·T²·d. Scale, mask, softmax and biases are O(b·H·T²) and O(b·T·d) and left out. Every
// implementation gets the same count, so GFLOP/s compare the same work; an implementation that computes the full
// T×T scores (all of them here do) does more arithmetic than it is credited with.

import { COPY_VOCAB, type ProblemKind } from "./problem.js";
import type { BenchShape } from "./shapes.js";

/** The four projections: 4 · 2·b·T·d². */
export function projectionFlops(s: BenchShape): number {
  return 4 * 2 * s.b * s.t * s.d * s.d;
}

/** Scores plus weighted sum, causal: (2 · 2·b·T²·d) / 2. */
export function attentionCoreFlops(s: BenchShape): number {
  return (2 * 2 * s.b * s.t * s.t * s.d) / 2;
}

/** Total FLOPs of one causal forward (see the comment at the top of this file). */
export function causalAttentionFlops(s: BenchShape): number {
  return projectionFlops(s) + attentionCoreFlops(s);
}

// The transformer block (--problem block), same conventions (causal attention core, multiply-add = 2 FLOPs):
//
//   qkv_proj      [b·T, d] × [d, 3d]                                       → 2·b·T·d·3d = 6·b·T·d²
//   out_proj      [b·T, d] × [d, d]                                        → 2·b·T·d²
//   MLP           mlp.0 [b·T, d] × [d, 4d] and mlp.2 [b·T, 4d] × [4d, d]  → 2 · 2·b·T·d·4d = 16·b·T·d²
//   attention     scores and weighted sum, halved for causal               → 2·b·T²·d
//
// i.e. flops = 24·b·T·d² + 2·b·T²·d. LayerNorm, GELU, biases and the residual adds are O(b·T·d) and left out.

/** The block's four matmuls (qkv_proj, out_proj, mlp.0, mlp.2): (6 + 2 + 16)·b·T·d². */
export function blockMatmulFlops(s: BenchShape): number {
  const rows = s.b * s.t;
  const qkv = 2 * rows * s.d * 3 * s.d;
  const out = 2 * rows * s.d * s.d;
  const mlp = 2 * (2 * rows * s.d * 4 * s.d);
  return qkv + out + mlp;
}

/** Total FLOPs of one block forward (see above): 24·b·T·d² + 2·b·T²·d. */
export function blockFlops(s: BenchShape): number {
  return blockMatmulFlops(s) + attentionCoreFlops(s);
}

// A training step (--problem train-block, train-copy), same conventions: the forward's matmuls, and for each of them
// two more of the same size in the backward (the gradient of its input, dY·Wᵀ, and of its weight, Xᵀ·dY; for the
// attention core dQ, dK from dS and dWeights, dV from dContext, causal halves again). So a step is 3 × the forward's
// count. Every one of them is needed: the block's first matmul (qkv_proj) needs its input gradient for ln1's
// parameters (train-block) and the embedding (train-copy). The copy model adds its output Linear, 2·b·T·E·V forward;
// its embedding is a lookup (no FLOPs counted). LayerNorm, GELU, softmax, the loss, the residuals and Adam's update
// (O(parameters)) are left out.

/** One training step of the block: 3 · (24·b·T·d² + 2·b·T²·d). */
export function trainBlockFlops(s: BenchShape): number {
  return 3 * blockFlops(s);
}

/** One training step of the copy-task model with vocabulary `vocab`: 3 · (24·b·T·E² + 2·b·T²·E + 2·b·T·E·V). */
export function trainCopyFlops(s: BenchShape, vocab: number): number {
  return 3 * (blockFlops(s) + 2 * s.b * s.t * s.d * vocab);
}

// One decoding step (--problem decode), same conventions: one new token per batch entry over a cache of T positions.
// The past keys and values are cached, so only the new token is projected; its one query row sees all T + 1 keys (no
// causal halving: nothing is masked).
//
//   projections   Q, K, V and out_proj of one token: 4 matmuls [b, d] × [d, d]   → 4 · 2·b·d²
//   attention     scores q·Kᵀ and weighted sum w·V over T + 1 keys, all heads     → 2 · 2·b·(T + 1)·d
//
// i.e. flops = 8·b·d² + 4·b·(T + 1)·d. Softmax, scale and the bias are left out, as above.

/** One decoding step: 8·b·d² + 4·b·(T + 1)·d (see above). */
export function decodeFlops(s: BenchShape): number {
  return 4 * 2 * s.b * s.d * s.d + 2 * 2 * s.b * (s.t + 1) * s.d;
}

/** FLOPs of one run (a forward, a training step, or a decoding step) of the problem `--problem` names. */
export function problemFlops(kind: ProblemKind, s: BenchShape): number {
  switch (kind) {
    case "block":
      return blockFlops(s);
    case "train-block":
      return trainBlockFlops(s);
    case "train-copy":
      return trainCopyFlops(s, COPY_VOCAB);
    case "decode":
      return decodeFlops(s);
    default:
      return causalAttentionFlops(s);
  }
}

/** The FLOP count in words, for the results file and the report's header. */
export const FLOP_FORMULA: Readonly<Record<ProblemKind, string>> = {
  attention: "8·b·T·d² + 2·b·T²·d",
  block: "24·b·T·d² + 2·b·T²·d",
  "train-block": "3 · (24·b·T·d² + 2·b·T²·d)",
  "train-copy": "3 · (24·b·T·d² + 2·b·T²·d + 2·b·T·d·V), V = 10",
  decode: "8·b·d² + 4·b·(T + 1)·d",
  flex: "not counted (the variants hide different keys; src/flex reports times only)",
  gpt2: "not counted (src/gpt2 reports times and tokens per second)",
};

/** GFLOP/s for `flops` done in `ms` milliseconds. */
export function gflops(flops: number, ms: number): number {
  return flops / (ms * 1e6);
}
