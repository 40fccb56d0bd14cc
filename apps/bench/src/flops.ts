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

import type { ProblemKind } from "./problem.js";
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

/** FLOPs of one forward of the problem `--problem` names. */
export function problemFlops(kind: ProblemKind, s: BenchShape): number {
  return kind === "block" ? blockFlops(s) : causalAttentionFlops(s);
}

/** The FLOP count in words, for the results file and the report's header. */
export const FLOP_FORMULA: Readonly<Record<ProblemKind, string>> = {
  attention: "8·b·T·d² + 2·b·T²·d",
  block: "24·b·T·d² + 2·b·T²·d",
};

/** GFLOP/s for `flops` done in `ms` milliseconds. */
export function gflops(flops: number, ms: number): number {
  return flops / (ms * 1e6);
}
