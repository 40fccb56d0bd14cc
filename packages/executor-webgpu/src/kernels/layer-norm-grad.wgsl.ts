// layer-norm backward (norm-backward.wgsl.ts), the statistics recomputed from x exactly as the forward kernel computes
// them (layer-norm.wgsl.ts: the row shifted by its first element, two passes, biased variance), so
// x̂ = ((x − x₀) − mean) · rstd is the forward's.
// - layer-norm-grad (to x): dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), ĝ = grad ⊙ weight (weight absent = 1).
// - layer-norm-weight-grad (to the weight): Σ over rows of grad ⊙ x̂, each row's (x₀, mean, rstd) kept in a scratch.
import type { WebGpuKernel } from "../executor.js";
import { layerNormStatsWgsl } from "./layer-norm.wgsl.js";
import { type NormStatistics, normBackwardKernels } from "./norm-backward.wgsl.js";

const LAYER_NORM: NormStatistics = {
  op: "layer-norm",
  rowStats: layerNormStatsWgsl,
  names: ["x0", "mean", "rstd"],
  xhat: (x) => `(((${x} - x0) - mean) * rstd)`,
  centered: true,
};

const KERNELS = normBackwardKernels(LAYER_NORM);

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const layerNormGradKernel: WebGpuKernel = KERNELS.grad;

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel: WebGpuKernel = KERNELS.weightGrad;
