// The running average of the gradient that adam-moment and sgd-momentum both keep, elementwise over same-shape float32
// inputs read through their strides, one invocation per element, in float32: out = keep · state + take · x, with
// x = d (d² for Adam's second moment) and d = grad + weightDecay · param (weight-decay.wgsl.ts). torch.optim's Adam and
// SGD write this one update under their own names (beta and 1 − beta; momentum and 1 − dampening). SGD's buffer alone
// starts from d itself at the first step (PyTorch clones d into it), so sgd-momentum passes its step count: at t = 1
// the old state is not read.
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { VALID_STEP_WGSL } from "./scalar-inputs.wgsl.js";
import { packWeightDecay, weightDecayWgsl } from "./weight-decay.wgsl.js";
import { storageBindings } from "./shared.wgsl.js";

export interface GradientAverage {
  /** The op's name, also the pipeline's cache key: whether a step is read follows from the op, so from the name. */
  readonly name: string;
  readonly state: GpuTensor;
  readonly grad: GpuTensor;
  /** Needed with weightDecay > 0 (the declarations' rule); an absent one is bound to the state and never read. */
  readonly param: GpuTensor | undefined;
  readonly weightDecay: number;
  /** The factors on the state and on the new term, each taken in float64 by the caller and rounded to float32 once. */
  readonly keep: number;
  readonly take: number;
  /** Average d² rather than d. */
  readonly square: boolean;
  /**
   * The step count t ([] or [1]), read in the shader: at t = 1 the output is d. Checked there as valid_step does (a bad
   * t makes every element NaN); the kernel checks one from the host before this runs (checkStep).
   */
  readonly step?: GpuTensor;
}

/** Params: n, state, grad, param (state's when absent) and step views, keep, take, weightDecay, decay on, square. */
export function gradientAverageProgram(a: GradientAverage, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const sv = p.view(a.state);
  const gv = p.view(a.grad);
  const pv = p.view(a.param ?? a.state);
  // The step's view, then the statements that read and check t; none without a step.
  const readStep = a.step
    ? /* wgsl */ `  let t = T[view_offset(${p.view(a.step)}u)];
  if (!valid_step(t)) { Y[i] = nan(); return; }
`
    : "";
  const keep = p.f32(a.keep);
  const take = p.f32(a.take);
  const wd = packWeightDecay(p, a.weightDecay, a.param !== undefined && a.weightDecay > 0);
  const sq = p.u32(a.square ? 1 : 0);
  return elementwiseProgram({
    name: a.name,
    params: p,
    helpers: a.step ? VALID_STEP_WGSL : "",
    bindings: storageBindings(a.step ? ["S", "G", "W", "T"] : ["S", "G", "W"]),
    body: /* wgsl */ `${readStep}  var d = G[view_at(${gv}u, i)];
  ${weightDecayWgsl(wd, "d", `W[view_at(${pv}u, i)]`)}
  ${a.step ? "if (t == 1.0) { Y[i] = d; return; }" : ""}
  let x = select(d, d * d, pu(${sq}u) != 0u);
  Y[i] = pf(${keep}u) * S[view_at(${sv}u, i)] + pf(${take}u) * x;`,
    // An absent param is bound to the state buffer and never read.
    inputs: [a.state, a.grad, a.param ?? a.state, ...(a.step ? [a.step] : [])],
    output: out,
  });
}
