import { defineOp } from "../op-def.js";
import { expectDim, expectSameShape } from "./shape-checks.js";
import type { LayerNormAttrs } from "./layer-norm.js";

export type LayerNormGradAttrs = LayerNormAttrs;

/**
 * The input gradient of layer norm, recomputing each row's mean and 1/σ from x: with x̂ the normalised row and
 * ĝ = grad ⊙ weight, dx = (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)) / σ. grad [..., E], x [..., E], weight [E] (optional) → [..., E].
 */
export const layerNormGradOp = defineOp<LayerNormGradAttrs>({
  kind: "layer-norm-grad",
  doc: "Layer norm backward to its input: (ĝ − mean(ĝ) − x̂·mean(ĝ ⊙ x̂)) / σ with ĝ = grad ⊙ weight, statistics recomputed from x.",
  inputs: [
    { name: "grad", doc: "[..., E]" },
    { name: "x", doc: "[..., E], the forward input" },
    { name: "weight", optional: true, rank: 1, doc: "[E]" },
  ],
  attrs: { eps: { type: "number", default: 1e-5 } },
  checkAttrs: (a, ctx) => {
    if (!(a.eps > 0)) ctx.fail("eps", "eps must be positive", "> 0", String(a.eps));
  },
  inferShape: ([g, x, w], _attrs, ctx) => {
    expectSameShape(ctx, "x", g!, x!);
    if (x!.length < 1) ctx.fail("x", "layer norm needs at least one axis", "rank >= 1", "a scalar");
    if (w) expectDim(ctx, "weight", "weight length must equal the last dim E", x![x!.length - 1]!, w[0]!, w);
    return x!;
  },
});

/**
 * The weight (gamma) gradient of layer norm: Σ over every leading position of grad ⊙ x̂, x̂ recomputed from x.
 * grad [..., E], x [..., E] → [E]. (The bias gradient is `sum-to` of grad.)
 */
export const layerNormWeightGradOp = defineOp<LayerNormGradAttrs>({
  kind: "layer-norm-weight-grad",
  doc: "Layer norm backward to its weight: Σ over rows of grad ⊙ x̂ → [E].",
  inputs: [
    { name: "grad", doc: "[..., E]" },
    { name: "x", doc: "[..., E], the forward input" },
  ],
  attrs: { eps: { type: "number", default: 1e-5 } },
  checkAttrs: (a, ctx) => {
    if (!(a.eps > 0)) ctx.fail("eps", "eps must be positive", "> 0", String(a.eps));
  },
  inferShape: ([g, x], _attrs, ctx) => {
    expectSameShape(ctx, "x", g!, x!);
    if (x!.length < 1) ctx.fail("x", "layer norm needs at least one axis", "rank >= 1", "a scalar");
    return [x![x!.length - 1]!];
  },
});
