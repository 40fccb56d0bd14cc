// Global gradient-norm clipping as graph nodes, torch.nn.utils.clip_grad_norm_: the squared norms of every gradient
// summed into one number (a chain of sum-squares nodes, each adding its tensor's sum of squares to the one before, so
// the op needs no variable number of inputs), then each gradient scaled by min(1, maxNorm / (sqrt(total) + eps)).
// Everything stays on the executor: the host never sees a gradient, only the one-element total when it asks.
import { defineOp } from "../op-def.js";
import { expectOneElement } from "./shape-checks.js";

/**
 * Σ x² over every element of x, plus `acc` when given (the sum of the gradients before it): x [...], acc [] or [1]
 * (optional) → [1]. Accumulated in float64 where the executor has it (cpu, wasm), in float32 by a tree on webgpu.
 */
export const sumSquaresOp = defineOp<Record<string, never>>({
  kind: "sum-squares",
  doc: "acc + Σ x²: one gradient's squared L2 norm added to the running total (for global gradient-norm clipping).",
  inputs: [
    { name: "x", doc: "[...], any shape" },
    { name: "acc", optional: true, doc: "[] or [1], the total so far" },
  ],
  attrs: {},
  inferShape: ([, acc], _attrs, ctx) => {
    if (acc) expectOneElement(ctx, "acc", "the running total is one number", acc);
    return [1];
  },
});

export interface ClipByNormAttrs {
  /** torch's max_norm, > 0. */
  readonly maxNorm: number;
  /** Added to the norm before dividing (torch's 1e-6). */
  readonly eps: number;
}

/**
 * x · min(1, maxNorm / (sqrt(sumSquares) + eps)), torch.nn.utils.clip_grad_norm_'s `clip_coef_clamped` applied to one
 * gradient: x [...], sumSquares [] or [1] (the total of every gradient's squares) → x's shape. A NaN or infinite total
 * gives NaN or 0 gradients, as torch's does (error_if_nonfinite=False).
 */
export const clipByNormOp = defineOp<ClipByNormAttrs>({
  kind: "clip-by-norm",
  doc: "x · min(1, maxNorm / (sqrt(sumSquares) + eps)): a gradient scaled as clip_grad_norm_ scales every one.",
  inputs: [
    { name: "x", doc: "[...], a gradient" },
    { name: "sumSquares", doc: "[] or [1], Σ of every gradient's squares (sum-squares)" },
  ],
  attrs: {
    maxNorm: { type: "number", min: 0 },
    eps: { type: "number", default: 1e-6, min: 0 },
  },
  checkAttrs: (a, ctx) => {
    if (!(a.maxNorm > 0) || !Number.isFinite(a.maxNorm))
      ctx.fail("maxNorm", "the norm to clip to must be positive", "a finite number > 0", String(a.maxNorm));
  },
  inferShape: ([x, total], _attrs, ctx) => {
    expectOneElement(ctx, "sumSquares", "the total is one number", total!);
    return x!;
  },
});
