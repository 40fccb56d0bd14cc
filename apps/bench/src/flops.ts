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

/** GFLOP/s for `flops` done in `ms` milliseconds. */
export function gflops(flops: number, ms: number): number {
  return flops / (ms * 1e6);
}
