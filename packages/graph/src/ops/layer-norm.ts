import { defineOp } from "../op-def.js";
import { checkEps, expectNormParam, normInputs } from "./norm-parts.js";
import { expectAxis } from "./shape-checks.js";
import { gradOf } from "../vjp-helpers.js";

export interface LayerNormAttrs {
  /** Added to the variance before the square root (PyTorch's default 1e-5); must be > 0 so a constant row stays finite. */
  readonly eps: number;
}

/**
 * Layer normalization over the last axis, PyTorch `nn.LayerNorm(E)`: `(x − mean) / sqrt(var + eps) · weight + bias`
 * with the biased variance (divided by E). weight and bias are optional (elementwise_affine=False leaves both out).
 * A constant row gives exactly `bias` (its deviations are 0), never NaN. x [..., E], weight [E], bias [E] → [..., E].
 */
export const layerNormOp = defineOp<LayerNormAttrs>({
  kind: "layer-norm",
  doc: "LayerNorm over the last axis: (x − mean) / sqrt(var + eps) · weight + bias, biased variance (nn.LayerNorm).",
  inputs: normInputs("[E], the affine scale (gamma)", "[E], the affine shift (beta)"),
  attrs: { eps: { type: "number", default: 1e-5, doc: "> 0, added to the variance" } },
  checkAttrs: (a, ctx) => checkEps(ctx, a.eps, "a constant row would divide 0 by 0"),
  inPlace: 0,
  inferShape: ([x, w, b], _attrs, ctx) => {
    expectAxis(ctx, "x", "layer norm", x!);
    const e = x![x!.length - 1]!;
    expectNormParam(ctx, "layer norm", "weight", e, w);
    expectNormParam(ctx, "layer norm", "bias", e, b);
    return x!;
  },
  // Statistics are recomputed from x (two row reductions) rather than saved: nothing extra stays alive for backward.
  vjp: (ctx) => {
    const g = gradOf(ctx, "layer-norm");
    const [x, w, b] = ctx.inputs;
    const eps = ctx.attrs.eps;
    return [
      ctx.needs(0) ? ctx.addGrad(0, "layer-norm-grad", { grad: g, x, weight: w }, { eps }) : undefined,
      w !== undefined && ctx.needs(1) ? ctx.addGrad(1, "layer-norm-weight-grad", { grad: g, x }, { eps }) : undefined,
      b !== undefined && ctx.needs(2) ? ctx.addGrad(2, "sum-to", { x: g }, { shape: [...ctx.shapeOf(b)] }) : undefined,
    ];
  },
});
