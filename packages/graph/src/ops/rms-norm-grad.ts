import type { RmsNormAttrs } from "./rms-norm.js";
import { normGradOp } from "./norm-parts.js";

export type RmsNormGradAttrs = RmsNormAttrs;

/**
 * The input gradient of RMS norm, recomputing each row's r = 1/sqrt(mean(x²) + eps) from x: with x̂ = x · r and
 * ĝ = grad ⊙ weight, dx = r · (ĝ − x̂ · mean(ĝ ⊙ x̂)). grad [..., E], x [..., E], weight [E] (optional) → [..., E].
 */
export const rmsNormGradOp = normGradOp({
  kind: "rms-norm-grad",
  doc: "RMS norm backward to its input: r · (ĝ − x̂ · mean(ĝ ⊙ x̂)) with ĝ = grad ⊙ weight, r recomputed from x.",
  norm: "rms norm",
  eps: 1e-6,
  wrt: "x",
});

/** The weight gradient of RMS norm: Σ over every leading position of grad ⊙ x̂, x̂ recomputed from x. → [E]. */
export const rmsNormWeightGradOp = normGradOp({
  kind: "rms-norm-weight-grad",
  doc: "RMS norm backward to its weight: Σ over rows of grad ⊙ x̂ → [E].",
  norm: "rms norm",
  eps: 1e-6,
  wrt: "weight",
});
