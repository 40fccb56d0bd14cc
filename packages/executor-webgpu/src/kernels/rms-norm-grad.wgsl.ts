// rms-norm backward (norm-backward.wgsl.ts), rstd recomputed from x exactly as the forward kernel computes it
// (rmsRowWgsl), x̂ = x · rstd.
// - rms-norm-grad (to x): dx = rstd · (ĝ − x̂ · mean(ĝ ⊙ x̂)), ĝ = grad ⊙ weight (absent = 1).
// - rms-norm-weight-grad: Σ over rows of grad ⊙ x̂, each row's rstd kept in a scratch.
import type { WebGpuKernel } from "../executor.js";
import { attrsOf, input, optionalInput } from "./inputs.js";
import { writeOutput } from "./output.js";
import { type NormStatistics, normGradProgram, normWeightGrad } from "./norm-backward.wgsl.js";
import { rmsRowWgsl } from "./rms-norm.wgsl.js";
import type { RmsNormGradAttrs } from "@attngraph/graph";

const RMS_NORM: NormStatistics = {
  op: "rms-norm",
  rowStats: rmsRowWgsl,
  names: ["rstd"],
  xhat: (x) => `(${x} * rstd)`,
  centered: false,
};

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = input(call, 0);
  const x = input(call, 1);
  const w = optionalInput(call, 2);
  const { eps } = attrsOf<RmsNormGradAttrs>(call);
  return writeOutput(call, gpu, (out) => normGradProgram(RMS_NORM, grad, x, w, eps, out));
};

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = input(call, 0);
  const x = input(call, 1);
  const { eps } = attrsOf<RmsNormGradAttrs>(call);
  return normWeightGrad(RMS_NORM, gpu, grad, x, eps);
};
