// sgd-momentum and sgd-step: SGD's update as PyTorch's torch.optim.SGD writes it (maximize=False), elementwise over
// same-shape float32 inputs read through their strides, one invocation per element, in float32.
// - Both: d = grad + weightDecay · param (the param term only with weightDecay > 0, as torch's `if weight_decay != 0`,
//   so an infinite param with no decay never turns into NaN).
// - sgd-momentum: the new momentum buffer, d at the first step (t = 1: PyTorch clones d into the buffer, and the old
//   buffer is not read) and momentum · buf + (1 − dampening) · d after: the running average gradient-average.wgsl.ts
//   writes for adam-moment too. 1 − dampening is taken in float64 on the host, then rounded to float32 once.
// - sgd-step: param − lr · u, u = d with momentum 0 (a buf input, if any, is not read), the buffer (after this step's
//   sgd-momentum) with momentum, d + momentum · buf with `nesterov`.
// The step t of sgd-momentum is checked as adam-step's (adam.wgsl.ts): an integer >= 1, checked on the host copy the
// executor keeps when `step` is (a view of) a host upload ("input" error naming `<node>.step`, nothing encoded, no
// readback), else in the shader, where a t that is NaN, ±∞, below 1 or not an integer makes every output element NaN.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { gradientAverageProgram } from "./gradient-average.wgsl.js";
import { programKernel } from "./output.js";
import { LR_SCALE_WGSL, checkLrScale, checkStep, lrScaleWgsl, packLrScale } from "./scalar-inputs.wgsl.js";
import { packWeightDecay, weightDecayWgsl } from "./weight-decay.wgsl.js";
import { storageBindings } from "./shared.wgsl.js";
import type { SgdMomentumAttrs, SgdStepAttrs } from "@attngraph/graph";

// ---- sgd-momentum ----

/** Inputs: buf [...], grad [...], param [...] (optional; needed with weightDecay > 0), step [] or [1]; attrs { momentum, dampening, weightDecay }. */
export const sgdMomentumKernel: WebGpuKernel = programKernel<
  SgdMomentumAttrs,
  [GpuTensor, GpuTensor, GpuTensor | undefined, GpuTensor]
>(
  // param is present with weightDecay > 0: the declaration's rule.
  ([buf, grad, param, step], { momentum, dampening, weightDecay }, out) =>
    gradientAverageProgram(
      {
        name: "sgd-momentum",
        state: buf,
        grad,
        param,
        weightDecay,
        keep: momentum,
        take: 1 - dampening,
        square: false,
        step,
      },
      out,
    ),
  (call, [, , , step]) => checkStep(call, step),
);

// ---- sgd-step ----

/**
 * Params: n, param, grad and buf (param's when unused) views, lr, momentum, weightDecay, decay on, mode (0 d, 1 buf, 2
 * nesterov), then the lrScale view (param's when absent) and whether it is there.
 */
function stepProgram(
  param: GpuTensor,
  grad: GpuTensor,
  buf: GpuTensor | undefined,
  lrScale: GpuTensor | undefined,
  a: SgdStepAttrs,
  out: GpuTensor,
): ProgramInfo {
  const useBuf = a.momentum > 0 && buf !== undefined;
  const p = elementwiseParams(out.size);
  const pv = p.view(param);
  const gv = p.view(grad);
  const bv = p.view(useBuf ? buf : param);
  const lr = p.f32(a.lr);
  const mom = p.f32(a.momentum);
  const wd = packWeightDecay(p, a.weightDecay, a.weightDecay > 0);
  const mode = p.u32(useBuf ? (a.nesterov ? 2 : 1) : 0);
  const ls = packLrScale(p, lrScale, param);
  return elementwiseProgram({
    name: "sgd-step",
    params: p,
    helpers: LR_SCALE_WGSL,
    bindings: storageBindings(["PA", "G", "B", "LS"]),
    body: /* wgsl */ `  let p = PA[view_at(${pv}u, i)];
  var d = G[view_at(${gv}u, i)];
  ${weightDecayWgsl(wd, "d", "p")}
  var u = d;
  let mode = pu(${mode}u);
  if (mode == 1u) { u = B[view_at(${bv}u, i)]; }
  if (mode == 2u) { u = d + pf(${mom}u) * B[view_at(${bv}u, i)]; }
  var lr = pf(${lr}u);
  ${lrScaleWgsl(ls)}
  Y[i] = p - lr * u;`,
    // Without momentum the buffer (if given) is not read: param is bound in its place; so is an absent lrScale.
    inputs: [param, grad, useBuf ? buf : param, lrScale ?? param],
    output: out,
  });
}

/**
 * Inputs: param [...], grad [...], buf [...] (optional; needed with momentum > 0), lrScale [] or [1] (optional, this
 * step's factor on lr); attrs { lr, momentum, nesterov, weightDecay }.
 */
export const sgdStepKernel: WebGpuKernel = programKernel<SgdStepAttrs, [GpuTensor, GpuTensor, GpuTensor?, GpuTensor?]>(
  // buf is present with momentum > 0: the declaration's rule.
  ([param, grad, buf, lrScale], attrs, out) => stepProgram(param, grad, buf, lrScale, attrs, out),
  (call, [, , , lrScale]) => {
    if (lrScale) checkLrScale(call, lrScale);
  },
);
