// What the cpu and wasm optimizer kernel tests (adam-step, sgd-momentum, sgd-step and the training loops chaining them)
// share: their attribute tables and the float64 answers to them. Each executor runs the tables through its own harness
// (host tensors on the cpu; uploaded values, strided views and leak checks on wasm). Case attributes are written as a
// test hands them to dispatch, optional ones left out; the references fill in the op's defaults.
import type { AdamStepAttrs, SgdMomentumAttrs, SgdStepAttrs } from "@attngraph/graph";
import type { Shape } from "@attngraph/tensor";
import { adamStep64, sgdMomentum64, sgdStep64 } from "../reference/optim64.js";
import { TorchAdam, TorchSGD } from "../reference/torch-optim64.js";

/** adam-step's attributes as a test writes them: lr, the rest optional. */
export type AdamStepCase = Pick<AdamStepAttrs, "lr"> & Partial<AdamStepAttrs>;
/** sgd-step's attributes as a test writes them: lr, the rest optional. */
export type SgdStepCase = Pick<SgdStepAttrs, "lr"> & Partial<SgdStepAttrs>;
/** sgd-momentum's attributes as a test writes them: momentum, the rest optional. */
export type SgdMomentumCase = Pick<SgdMomentumAttrs, "momentum"> & Partial<SgdMomentumAttrs>;
/** A training loop's SGD: sgd-step's attributes and sgd-momentum's dampening, all given. */
export type SgdLoop = SgdStepAttrs & Pick<SgdMomentumAttrs, "dampening">;

/** Adam and AdamW, betas of 0, a weightDecay that only AdamW (decoupled) applies in the step. */
export const ADAM_STEP_CASES: readonly AdamStepCase[] = [
  { lr: 1e-3 },
  { lr: 1e-2, weightDecay: 0.1 }, // not decoupled: the step ignores weightDecay
  { lr: 1e-2, weightDecay: 0.1, decoupled: true },
  { lr: 5e-3, beta1: 0.8, beta2: 0.99, eps: 1e-6, weightDecay: 0.5, decoupled: true },
  { lr: 1e-2, beta1: 0, beta2: 0, eps: 1e-3 },
];

/** Five-step training loops: Adam, Adam with (L2) weight decay, AdamW. */
export const ADAM_LOOPS: readonly AdamStepAttrs[] = [
  { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false },
  { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.05, decoupled: false },
  { lr: 2e-2, beta1: 0.85, beta2: 0.98, eps: 1e-6, weightDecay: 0.1, decoupled: true },
];

/** Plain, weight decay, heavy ball (with the decay already in the buffer), Nesterov. */
export const SGD_STEP_CASES: readonly SgdStepCase[] = [
  { lr: 1e-2 },
  { lr: 1e-1, weightDecay: 0.1 },
  { lr: 1e-2, momentum: 0.9 },
  { lr: 1e-2, momentum: 0.9, weightDecay: 0.5 }, // the buffer already holds the decay: the step reads buf alone
  { lr: 5e-2, momentum: 0.9, nesterov: true },
  { lr: 5e-2, momentum: 0.5, nesterov: true, weightDecay: 0.2 },
];

/** Momentum, dampening from 0 to 1, weight decay, momentum 0. */
export const SGD_MOMENTUM_CASES: readonly SgdMomentumCase[] = [
  { momentum: 0.9 },
  { momentum: 0.9, dampening: 0.1 },
  { momentum: 0.5, dampening: 1, weightDecay: 0.1 },
  { momentum: 0.99, weightDecay: 0.5 },
  { momentum: 0, weightDecay: 0.01 },
];

/** Five-step training loops: plain SGD with and without weight decay, heavy ball with dampening, Nesterov. */
export const SGD_LOOPS: readonly SgdLoop[] = [
  { lr: 0.1, momentum: 0, dampening: 0, nesterov: false, weightDecay: 0 },
  { lr: 0.1, momentum: 0, dampening: 0, nesterov: false, weightDecay: 0.05 },
  { lr: 5e-2, momentum: 0.9, dampening: 0, nesterov: false, weightDecay: 0 },
  { lr: 5e-2, momentum: 0.9, dampening: 0.3, nesterov: false, weightDecay: 0.1 },
  { lr: 5e-2, momentum: 0.8, dampening: 0, nesterov: true, weightDecay: 0.01 },
];

/** Step inputs that are not an integer >= 1 (0, 1.5, NaN, −2, ∞), each in one of the two shapes a step may have. */
export const BAD_STEP_VALUES: readonly (readonly [number, Shape])[] = [
  [0, []],
  [1.5, [1]],
  [NaN, []],
  [-2, [1]],
  [Infinity, []],
];

/** How a test names an SGD loop. */
export const sgdLoopLabel = (a: SgdLoop): string =>
  a.momentum === 0 ? "plain SGD" : `${a.nesterov ? "Nesterov" : "momentum"} ${a.momentum}, dampening ${a.dampening}`;

/** adam-step's answer in float64 for a case (torch's update: optim64's adamStep64 with the op's defaults). */
export const adamStepCase64 = (
  param: ArrayLike<number>,
  m: ArrayLike<number>,
  v: ArrayLike<number>,
  t: number,
  a: AdamStepCase,
): Float64Array =>
  adamStep64(param, m, v, t, { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false, ...a });

/** sgd-step's answer in float64 for a case (optim64's sgdStep64 with the op's defaults). */
export const sgdStepCase64 = (
  param: ArrayLike<number>,
  grad: ArrayLike<number>,
  buf: ArrayLike<number> | undefined,
  a: SgdStepCase,
): Float64Array => sgdStep64(param, grad, buf, { momentum: 0, nesterov: false, weightDecay: 0, ...a });

/** sgd-momentum's answer in float64 for a case (optim64's sgdMomentum64 with the op's defaults). */
export const sgdMomentumCase64 = (
  buf: ArrayLike<number>,
  grad: ArrayLike<number>,
  param: ArrayLike<number> | undefined,
  t: number,
  a: SgdMomentumCase,
): Float64Array => sgdMomentum64(buf, grad, param, t, { dampening: 0, weightDecay: 0, ...a });

/** torch.optim.Adam (AdamW when decoupled) on one parameter, updated in place; its moments read after each step. */
export const torchAdamLoop = (param: Float64Array, a: AdamStepAttrs): TorchAdam =>
  new TorchAdam([param], { lr: a.lr, betas: [a.beta1, a.beta2], eps: a.eps, weight_decay: a.weightDecay }, a.decoupled);

/** torch.optim.SGD on one parameter, updated in place; its momentum buffer read after each step. */
export const torchSgdLoop = (param: Float64Array, a: SgdLoop): TorchSGD =>
  new TorchSGD([param], {
    lr: a.lr,
    momentum: a.momentum,
    dampening: a.dampening,
    weight_decay: a.weightDecay,
    nesterov: a.nesterov,
  });
