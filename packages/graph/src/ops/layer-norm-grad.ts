import type { LayerNormAttrs } from "./layer-norm.js";
import { normGradOp } from "./norm-parts.js";

export type LayerNormGradAttrs = LayerNormAttrs;

/**
 * The input gradient of layer norm, recomputing each row's mean and 1/σ from x: with x̂ the normalised row and
 * ĝ = grad ⊙ weight, dx = (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)) / σ. grad [..., E], x [..., E], weight [E] (optional) → [..., E].
 */
export const layerNormGradOp = normGradOp({
  kind: "layer-norm-grad",
  doc: "Layer norm backward to its input: (ĝ − mean(ĝ) − x̂·mean(ĝ ⊙ x̂)) / σ with ĝ = grad ⊙ weight, statistics recomputed from x.",
  norm: "layer norm",
  eps: 1e-5,
  wrt: "x",
});

/**
 * The weight (gamma) gradient of layer norm: Σ over every leading position of grad ⊙ x̂, x̂ recomputed from x.
 * grad [..., E], x [..., E] → [E]. (The bias gradient is `sum-to` of grad.)
 */
export const layerNormWeightGradOp = normGradOp({
  kind: "layer-norm-weight-grad",
  doc: "Layer norm backward to its weight: Σ over rows of grad ⊙ x̂ → [E].",
  norm: "layer norm",
  eps: 1e-5,
  wrt: "weight",
});
