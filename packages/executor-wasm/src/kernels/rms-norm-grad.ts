// rms-norm-grad and rms-norm-weight-grad: RMS norm's backward to its input and to its weight, r recomputed from x as
// the forward computes it, in the module (assembly/rms-norm.ts). The weight gradient sums over rows into float64
// accumulators kept across chunks and rounded once at the end, as layer-norm-weight-grad's. Any views.
import { chunkedKernel } from "../chunks.js";
import { normInputGrad, normWeightGrad, type NormGrad } from "./norm-grad-rows.js";

/** The module's exports; work per element in multiply-adds of the SIMD matmul: three scalar float64 passes over one or two rows. */
const RMS_NORM_GRAD: NormGrad = { input: "rmsNormGrad", weight: "rmsNormWeightGrad", work: 30 };

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormGradKernel = chunkedKernel((call, ctx) => normInputGrad(call, ctx, RMS_NORM_GRAD));

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel = chunkedKernel((call, ctx) => normWeightGrad(call, ctx, RMS_NORM_GRAD));
