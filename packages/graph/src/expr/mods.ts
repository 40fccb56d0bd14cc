// The modifications attention-gym opens with, as expressions: ALiBi's bias, a causal document mask, a sliding window.
// Users write their own the same way; these are the ones the docs, tests and benches reach for, written once.
import type { Expr } from "./types.js";

/** ALiBi as a score modification: score + slopes[h] · (kv − q), `slopes` an input [H]. */
export function alibiScoreMod(slopes = "slopes"): Expr {
  return {
    op: "add",
    args: [
      "score",
      {
        op: "mul",
        args: [
          { op: "input", name: slopes, index: ["h"] },
          { op: "sub", args: ["kv", "q"] },
        ],
      },
    ],
  };
}

/** A causal mask within documents: keep (q, kv) when doc[b, q] = doc[b, kv] and kv ≤ q, `doc` an input [B, L]. */
export function documentCausalMask(doc = "doc"): Expr {
  return {
    op: "and",
    args: [
      {
        op: "eq",
        args: [
          { op: "input", name: doc, index: ["b", "q"] },
          { op: "input", name: doc, index: ["b", "kv"] },
        ],
      },
      { op: "ge", args: ["q", "kv"] },
    ],
  };
}

/** Soft-capping (Gemma 2's, Grok's): cap · tanh(e / cap), which bounds a score to (−cap, cap) smoothly. */
export function softCap(e: Expr, cap: number): Expr {
  return { op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: [e, cap] }] }, cap] };
}
