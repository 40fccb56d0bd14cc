// adam-moment and adam-step: Adam's (AdamW's) optimizer update as PyTorch's torch.optim.Adam writes it, elementwise
// over same-shape float32 inputs read through their strides, one invocation per element, in float32.
// - adam-moment: g = grad + weightDecay · param (the param term only with weightDecay > 0, as torch's
//   `if weight_decay != 0`), out = beta · state + (1 − beta) · (square ? g² : g): the running average
//   gradient-average.wgsl.ts writes for sgd-momentum too. beta and 1 − beta are taken in float64 on the host, then
//   rounded to float32 once each.
// - adam-step: out = p − (lr / bc1) · m / (sqrt(v) / sqrt(bc2) + eps), p = param · (1 − lr · weightDecay) with
//   `decoupled` (AdamW) else param, bc = 1 − beta^t. t is the one element of `step`, read in the shader: it is never
//   read back. beta^t = exp(t · ln beta) with ln beta taken in float64 on the host (so beta's float32 rounding does not
//   reach the power: 0.9999999 rounded to float32 would be 3% off at t = 1e6), and 1 − beta^t = −expm1(t · ln beta),
//   where expm1 is a Taylor polynomial below |x| = 0.5 (1 − 0.999 would otherwise lose four digits to cancellation).
//   beta = 0 (ln = −∞) is ln beta = −1e4, so beta^t = 0 exactly; x is clamped at −200, where exp is 0 in float32.
// The step value t must be an integer >= 1, and an lrScale a finite number >= 0: checked on the host for an upload, in
// the shader otherwise (scalar-inputs.wgsl.ts).
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { gradientAverageProgram } from "./gradient-average.wgsl.js";
import { programKernel } from "./output.js";
import {
  LR_SCALE_WGSL,
  VALID_STEP_WGSL,
  checkLrScale,
  checkStep,
  lrScaleWgsl,
  packLrScale,
} from "./scalar-inputs.wgsl.js";
import { storageBindings } from "./shared.wgsl.js";
import type { AdamMomentAttrs, AdamStepAttrs } from "@attngraph/graph";

/** ln beta for `bias_correction`: −1e4 stands for beta = 0 (−∞), whose powers are all exactly 0 in float32. */
const lnBeta = (b: number): number => (b > 0 ? Math.max(Math.log(b), -1e4) : -1e4);

// ---- adam-moment ----

/** Inputs: state [...], grad [...], param [...] (optional; needed with weightDecay > 0); attrs { beta, square, weightDecay }. */
export const adamMomentKernel: WebGpuKernel = programKernel<AdamMomentAttrs, [GpuTensor, GpuTensor, GpuTensor?]>(
  // param is present with weightDecay > 0: the declaration's rule.
  ([state, grad, param], { beta, square, weightDecay }, out) =>
    gradientAverageProgram(
      { name: "adam-moment", state, grad, param, weightDecay, keep: beta, take: 1 - beta, square },
      out,
    ),
);

// ---- adam-step ----

/**
 * WGSL: `bias_correction(ln_beta, t)` = 1 − beta^t = −expm1(t · ln beta), accurate to float32 where beta^t is near 1
 * (a degree-9 Taylor polynomial below |x| = 0.5, whose last term is under 1.1e-8 · |x| there), and `valid_step(t)`.
 */
export const ADAM_STEP_WGSL = /* wgsl */ `${VALID_STEP_WGSL}
fn expm1_f32(x: f32) -> f32 {
  if (abs(x) < 0.5) {
    let p = 1.0 + x / 2.0 * (1.0 + x / 3.0 * (1.0 + x / 4.0 * (1.0 + x / 5.0 * (1.0 + x / 6.0 * (1.0 + x / 7.0 * (1.0 + x / 8.0 * (1.0 + x / 9.0)))))));
    return x * p;
  }
  return exp(x) - 1.0;
}
fn bias_correction(ln_beta: f32, t: f32) -> f32 { return -expm1_f32(max(t * ln_beta, -200.0)); }`;

/**
 * Params: n, param, m, v, step and lrScale views, ln beta1, ln beta2, lr, eps, the decay factor (1 − lr · weightDecay
 * or 1), then lrScale present, weightDecay and decoupled. With lrScale, the shader scales lr and takes the decay factor
 * from the scaled lr itself; without, the factor is the host's (float64, rounded once), as before lrScale existed.
 */
function stepProgram(
  param: GpuTensor,
  m: GpuTensor,
  v: GpuTensor,
  step: GpuTensor,
  lrScale: GpuTensor | undefined,
  a: AdamStepAttrs,
  out: GpuTensor,
): ProgramInfo {
  const p = elementwiseParams(out.size);
  const pv = p.view(param);
  const mv = p.view(m);
  const vv = p.view(v);
  const tv = p.view(step);
  const l1 = p.f32(lnBeta(a.beta1));
  const l2 = p.f32(lnBeta(a.beta2));
  const lr = p.f32(a.lr);
  const eps = p.f32(a.eps);
  const decay = p.f32(a.decoupled ? 1 - a.lr * a.weightDecay : 1);
  // An absent lrScale is bound to the step buffer and never read.
  const ls = packLrScale(p, lrScale, step);
  const wd = p.f32(a.weightDecay);
  const dec = p.u32(a.decoupled ? 1 : 0);
  return elementwiseProgram({
    name: "adam-step",
    params: p,
    helpers: `${ADAM_STEP_WGSL}${LR_SCALE_WGSL}`,
    bindings: storageBindings(["PA", "M", "V", "T", "LS"]),
    body: /* wgsl */ `  let t = T[view_offset(${tv}u)];
  if (!valid_step(t)) { Y[i] = nan(); return; }
  var lr = pf(${lr}u);
  var decay = pf(${decay}u);
  ${lrScaleWgsl(
    ls,
    `
    decay = select(1.0, 1.0 - lr * pf(${wd}u), pu(${dec}u) != 0u);`,
  )}
  let bc1 = bias_correction(pf(${l1}u), t);
  let bc2 = bias_correction(pf(${l2}u), t);
  let p = PA[view_at(${pv}u, i)] * decay;
  let denom = sqrt(V[view_at(${vv}u, i)]) / sqrt(bc2) + pf(${eps}u);
  Y[i] = p - (lr / bc1) * M[view_at(${mv}u, i)] / denom;`,
    inputs: [param, m, v, step, lrScale ?? step],
    output: out,
  });
}

/**
 * Inputs: param [...], m [...], v [...], step [] or [1], lrScale [] or [1] (optional, this step's factor on lr); attrs
 * { lr, beta1, beta2, eps, weightDecay, decoupled }.
 */
export const adamStepKernel: WebGpuKernel = programKernel<
  AdamStepAttrs,
  [GpuTensor, GpuTensor, GpuTensor, GpuTensor, GpuTensor?]
>(
  ([param, m, v, step, lrScale], attrs, out) => stepProgram(param, m, v, step, lrScale, attrs, out),
  (call, [, , , step, lrScale]) => {
    checkStep(call, step);
    if (lrScale) checkLrScale(call, lrScale);
  },
);
