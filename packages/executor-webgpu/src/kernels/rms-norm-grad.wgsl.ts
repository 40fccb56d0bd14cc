// rms-norm backward (norm-backward.wgsl.ts), rstd recomputed from x exactly as the forward kernel computes it
// (rmsRowWgsl), x̂ = x · rstd.
// - rms-norm-grad (to x): dx = rstd · (ĝ − x̂ · mean(ĝ ⊙ x̂)), ĝ = grad ⊙ weight (absent = 1).
// - rms-norm-weight-grad: Σ over rows of grad ⊙ x̂, each row's rstd kept in a scratch.
import type { WebGpuKernel } from "../executor.js";
import { type NormStatistics, normBackwardKernels } from "./norm-backward.wgsl.js";
import { rmsRowWgsl } from "./rms-norm.wgsl.js";

const RMS_NORM: NormStatistics = {
  op: "rms-norm",
  rowStats: rmsRowWgsl,
  names: ["rstd"],
  xhat: (x) => `(${x} * rstd)`,
  centered: false,
};

const KERNELS = normBackwardKernels(RMS_NORM);

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormGradKernel: WebGpuKernel = KERNELS.grad;

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel: WebGpuKernel = KERNELS.weightGrad;
