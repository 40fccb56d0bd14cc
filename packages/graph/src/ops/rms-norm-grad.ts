import { defineOp } from "../op-def.js";
import { expectDim, expectSameShape } from "./shape-checks.js";
import type { RmsNormAttrs } from "./rms-norm.js";

export type RmsNormGradAttrs = RmsNormAttrs;

const eps = { type: "number", default: 1e-6 } as const;

/**
 * The input gradient of RMS norm, recomputing each row's r = 1/sqrt(mean(x²) + eps) from x: with x̂ = x · r and
 * ĝ = grad ⊙ weight, dx = r · (ĝ − x̂ · mean(ĝ ⊙ x̂)). grad [..., E], x [..., E], weight [E] (optional) → [..., E].
 */
export const rmsNormGradOp = defineOp<RmsNormGradAttrs>({
  kind: "rms-norm-grad",
  doc: "RMS norm backward to its input: r · (ĝ − x̂ · mean(ĝ ⊙ x̂)) with ĝ = grad ⊙ weight, r recomputed from x.",
  inputs: [
    { name: "grad", doc: "[..., E]" },
    { name: "x", doc: "[..., E], the forward input" },
    { name: "weight", optional: true, rank: 1, doc: "[E]" },
  ],
  attrs: { eps },
  checkAttrs: (a, ctx) => {
    if (!(a.eps > 0)) ctx.fail("eps", "eps must be positive", "> 0", String(a.eps));
  },
  inferShape: ([g, x, w], _attrs, ctx) => {
    expectSameShape(ctx, "x", g!, x!);
    if (x!.length < 1) ctx.fail("x", "rms norm needs at least one axis", "rank >= 1", "a scalar");
    if (w) expectDim(ctx, "weight", "weight length must equal the last dim E", x![x!.length - 1]!, w[0]!, w);
    return x!;
  },
});

/** The weight gradient of RMS norm: Σ over every leading position of grad ⊙ x̂, x̂ recomputed from x. → [E]. */
export const rmsNormWeightGradOp = defineOp<RmsNormGradAttrs>({
  kind: "rms-norm-weight-grad",
  doc: "RMS norm backward to its weight: Σ over rows of grad ⊙ x̂ → [E].",
  inputs: [
    { name: "grad", doc: "[..., E]" },
    { name: "x", doc: "[..., E], the forward input" },
  ],
  attrs: { eps },
  checkAttrs: (a, ctx) => {
    if (!(a.eps > 0)) ctx.fail("eps", "eps must be positive", "> 0", String(a.eps));
  },
  inferShape: ([g, x], _attrs, ctx) => {
    expectSameShape(ctx, "x", g!, x!);
    if (x!.length < 1) ctx.fail("x", "rms norm needs at least one axis", "rank >= 1", "a scalar");
    return [x![x!.length - 1]!];
  },
});
