// Float64 references for the optimizer ops (packages/graph/src/ops/adam.ts: adam-moment, adam-step; ops/sgd.ts:
// sgd-momentum, sgd-step), written from the op docs and torch.optim.Adam / AdamW / SGD, never from an executor. Plain
// loops over dense row-major arrays. optim64.test.ts proves training loops built from them equal to separate float64
// transcriptions of PyTorch's Adam, AdamW and SGD, and checks first steps by hand.
import type { AdamMomentAttrs, AdamStepAttrs, SgdMomentumAttrs, SgdStepAttrs } from "@attngraph/graph";
import { AttnGraphError, describe } from "@attngraph/tensor";

/** AdamMomentAttrs: the op's attributes, as its declaration types them. */
export type AdamMoment64 = AdamMomentAttrs;

/** AdamStepAttrs: the op's attributes, as its declaration types them. */
export type AdamStep64 = AdamStepAttrs;

/** The step t, an integer >= 1, else an AttnGraphError naming `step` (adamStep64 and sgdMomentum64). */
function checkStep(step: number): void {
  if (!(Number.isInteger(step) && step >= 1))
    throw new AttnGraphError(
      "input",
      describe("step", "the step count must be an integer >= 1", "1, 2, 3, …", String(step)),
    );
}

/**
 * One Adam moment update, elementwise: with g = grad + weightDecay · param (an absent param counts as 0, and then
 * weightDecay must be 0), beta · state + (1 − beta) · g, or · g² with `square`.
 */
export function adamMoment64(
  state: ArrayLike<number>,
  grad: ArrayLike<number>,
  param: ArrayLike<number> | undefined,
  a: AdamMoment64,
): Float64Array {
  if (grad.length !== state.length)
    throw new Error(`adamMoment64: ${grad.length} gradient elements for ${state.length} state elements`);
  if (param && param.length !== state.length)
    throw new Error(`adamMoment64: ${param.length} parameter elements for ${state.length} state elements`);
  if (!(a.beta >= 0 && a.beta < 1)) throw new Error(`adamMoment64: beta ${a.beta} outside [0, 1)`);
  if (!(a.weightDecay >= 0)) throw new Error(`adamMoment64: weightDecay ${a.weightDecay} is negative`);
  if (a.weightDecay > 0 && !param) throw new Error("adamMoment64: weight decay needs the parameter");
  const out = new Float64Array(state.length);
  for (let i = 0; i < out.length; i++) {
    const g = grad[i]! + (param ? a.weightDecay * param[i]! : 0);
    out[i] = a.beta * state[i]! + (1 - a.beta) * (a.square ? g * g : g);
  }
  return out;
}

/**
 * One Adam (AdamW with `decoupled`) parameter update, elementwise, from the moments after this step's update:
 * p = decoupled ? param · (1 − lr · weightDecay) : param, then p − (lr / (1 − beta1^t)) · m / (sqrt(v) / sqrt(1 − beta2^t) + eps).
 * `step` is t, an integer >= 1 (1 for the first step); anything else throws an AttnGraphError naming `step`.
 */
export function adamStep64(
  param: ArrayLike<number>,
  m: ArrayLike<number>,
  v: ArrayLike<number>,
  step: number,
  a: AdamStep64,
): Float64Array {
  if (m.length !== param.length || v.length !== param.length)
    throw new Error(`adamStep64: ${param.length} parameters, ${m.length} first and ${v.length} second moments`);
  checkStep(step);
  const bc1 = 1 - a.beta1 ** step;
  const bc2 = 1 - a.beta2 ** step;
  const stepSize = a.lr / bc1;
  const bc2Sqrt = Math.sqrt(bc2);
  const decay = a.decoupled ? 1 - a.lr * a.weightDecay : 1;
  const out = new Float64Array(param.length);
  for (let i = 0; i < out.length; i++)
    out[i] = param[i]! * decay - (stepSize * m[i]!) / (Math.sqrt(v[i]!) / bc2Sqrt + a.eps);
  return out;
}

/** SgdMomentumAttrs: the op's attributes, as its declaration types them. */
export type SgdMomentum64 = SgdMomentumAttrs;

/** SgdStepAttrs: the op's attributes, as its declaration types them. */
export type SgdStep64 = SgdStepAttrs;

/**
 * SGD's momentum buffer after step t, elementwise: with d = grad + weightDecay · param (an absent param counts as 0,
 * and then weightDecay must be 0), d at t = 1 (PyTorch clones d into the new buffer; `buf` is not read at all, so a
 * NaN there does not matter), momentum · buf + (1 − dampening) · d after. `step` is t, an integer >= 1; anything
 * else throws an AttnGraphError naming `step`.
 */
export function sgdMomentum64(
  buf: ArrayLike<number>,
  grad: ArrayLike<number>,
  param: ArrayLike<number> | undefined,
  step: number,
  a: SgdMomentum64,
): Float64Array {
  if (grad.length !== buf.length)
    throw new Error(`sgdMomentum64: ${grad.length} gradient elements for ${buf.length} buffer elements`);
  if (param && param.length !== buf.length)
    throw new Error(`sgdMomentum64: ${param.length} parameter elements for ${buf.length} buffer elements`);
  if (!(a.momentum >= 0)) throw new Error(`sgdMomentum64: momentum ${a.momentum} is negative`);
  if (!(a.dampening >= 0 && a.dampening <= 1))
    throw new Error(`sgdMomentum64: dampening ${a.dampening} outside [0, 1]`);
  if (!(a.weightDecay >= 0)) throw new Error(`sgdMomentum64: weightDecay ${a.weightDecay} is negative`);
  if (a.weightDecay > 0 && !param) throw new Error("sgdMomentum64: weight decay needs the parameter");
  checkStep(step);
  const out = new Float64Array(buf.length);
  for (let i = 0; i < out.length; i++) {
    const d = grad[i]! + (param ? a.weightDecay * param[i]! : 0);
    out[i] = step === 1 ? d : a.momentum * buf[i]! + (1 - a.dampening) * d;
  }
  return out;
}

/**
 * One SGD parameter update, elementwise: with d = grad + weightDecay · param, param − lr · u where u = d with momentum
 * 0 (`buf`, if given, is not read), buf (the buffer after this step's sgd-momentum) with momentum, and
 * d + momentum · buf with `nesterov`.
 */
export function sgdStep64(
  param: ArrayLike<number>,
  grad: ArrayLike<number>,
  buf: ArrayLike<number> | undefined,
  a: SgdStep64,
): Float64Array {
  if (grad.length !== param.length)
    throw new Error(`sgdStep64: ${grad.length} gradient elements for ${param.length} parameters`);
  if (buf && buf.length !== param.length)
    throw new Error(`sgdStep64: ${buf.length} buffer elements for ${param.length} parameters`);
  if (!(a.lr > 0)) throw new Error(`sgdStep64: lr ${a.lr} is not positive`);
  if (!(a.momentum >= 0)) throw new Error(`sgdStep64: momentum ${a.momentum} is negative`);
  if (!(a.weightDecay >= 0)) throw new Error(`sgdStep64: weightDecay ${a.weightDecay} is negative`);
  if (a.nesterov && a.momentum === 0) throw new Error("sgdStep64: Nesterov momentum needs a momentum > 0");
  if (a.momentum > 0 && !buf) throw new Error("sgdStep64: momentum needs the buffer");
  const out = new Float64Array(param.length);
  for (let i = 0; i < out.length; i++) {
    const d = grad[i]! + a.weightDecay * param[i]!;
    const u = a.momentum === 0 ? d : a.nesterov ? d + a.momentum * buf![i]! : buf![i]!;
    out[i] = param[i]! - a.lr * u;
  }
  return out;
}
