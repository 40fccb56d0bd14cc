import { defineOp } from "../op-def.js";
import { checkEps, expectNormParam, normInputs } from "./norm-parts.js";
import { expectAxis } from "./shape-checks.js";
import { gradOf } from "../vjp-helpers.js";

export interface RmsNormAttrs {
  /** Added to the mean square before the square root (Llama's rms_norm_eps, often 1e-6); > 0 so a zero row stays 0. */
  readonly eps: number;
}

/**
 * RMS normalization over the last axis, Llama's `LlamaRMSNorm` (and `torch.nn.RMSNorm`): x / sqrt(mean(x²) + eps) ·
 * weight, no mean subtracted and no bias. Computed in float32 or wider, as LlamaRMSNorm upcasts. weight is optional
 * (1). A row of zeros gives zeros. x [..., E], weight [E] → [..., E].
 */
export const rmsNormOp = defineOp<RmsNormAttrs>({
  kind: "rms-norm",
  doc: "RMSNorm over the last axis: x / sqrt(mean(x²) + eps) · weight (LlamaRMSNorm, nn.RMSNorm).",
  inputs: normInputs("[E], the scale"),
  attrs: { eps: { type: "number", default: 1e-6, doc: "> 0, added to the mean square" } },
  checkAttrs: (a, ctx) => checkEps(ctx, a.eps, "a zero row would divide 0 by 0"),
  inPlace: 0,
  inferShape: ([x, w], _attrs, ctx) => {
    expectAxis(ctx, "x", "rms norm", x!);
    expectNormParam(ctx, "rms norm", "weight", x![x!.length - 1]!, w);
    return x!;
  },
  // The reciprocal RMS is recomputed from x (one row reduction) rather than saved, as layer-norm's rule does.
  vjp: (ctx) => {
    const g = gradOf(ctx, "rms-norm");
    const [x, w] = ctx.inputs;
    const eps = ctx.attrs.eps;
    return [
      ctx.needs(0) ? ctx.addGrad(0, "rms-norm-grad", { grad: g, x, weight: w }, { eps }) : undefined,
      w !== undefined && ctx.needs(1) ? ctx.addGrad(1, "rms-norm-weight-grad", { grad: g, x }, { eps }) : undefined,
    ];
  },
});
