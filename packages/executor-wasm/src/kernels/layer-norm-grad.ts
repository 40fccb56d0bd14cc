// layer-norm-grad and layer-norm-weight-grad: layer norm's backward to its input and to its weight, each row's mean and
// 1/σ recomputed from x as the forward kernel computes them (float64, two-pass), in the module
// (assembly/layer-norm-grad.ts; f64x2 lanes on contiguous rows). The weight gradient sums over rows into float64
// accumulators kept in a block of their own across chunks, rounded once at the end. Any views. With a signal, a big call
// runs in chunks of rows (chunks.ts).
import { chunkedKernel } from "../chunks.js";
import { normInputGrad, normWeightGrad, type NormGrad } from "./norm-grad-rows.js";

/** The module's exports; work per element in multiply-adds of the SIMD matmul: four float64 passes over one or two rows. */
const LAYER_NORM_GRAD: NormGrad = { input: "layerNormGrad", weight: "layerNormWeightGrad", work: 30 };

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const layerNormGradKernel = chunkedKernel((call, ctx) => normInputGrad(call, ctx, LAYER_NORM_GRAD));

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel = chunkedKernel((call, ctx) => normWeightGrad(call, ctx, LAYER_NORM_GRAD));
