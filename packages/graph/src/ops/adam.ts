import { defineOp } from "../op-def.js";
import { expectOneElement, expectSameShape } from "./shape-checks.js";
import {
  checkLearningRate,
  expectBetaBelowOne,
  expectDecayParam,
  expectLrScale,
  LR_SCALE_INPUT,
  STEP_INPUT,
  WEIGHT_DECAY_ATTR,
} from "./optimizer-parts.js";

export interface AdamMomentAttrs {
  /** β1 for the first moment, β2 for the second. */
  readonly beta: number;
  /** false: the first moment (of g); true: the second (of g²). */
  readonly square: boolean;
  /** L2 penalty folded into the gradient first, g + weightDecay · param (torch.optim.Adam's weight_decay); 0 = none. */
  readonly weightDecay: number;
}

/**
 * One moment of Adam, PyTorch `torch.optim.Adam`: with g = grad + weightDecay · param, the new moment is
 * beta · state + (1 − beta) · g (first moment) or beta · state + (1 − beta) · g² (second). The moments start at 0.
 * state, grad, param (needed only with weightDecay) of one shape → that shape.
 */
export const adamMomentOp = defineOp<AdamMomentAttrs>({
  kind: "adam-moment",
  doc: "Adam's moment update: beta · state + (1 − beta) · g (or g²), g = grad + weightDecay · param.",
  inputs: [
    { name: "state", doc: "[...], the moment so far (0 before the first step)" },
    { name: "grad", doc: "[...], the parameter's gradient" },
    { name: "param", optional: true, doc: "[...], the parameter (for weightDecay)" },
  ],
  attrs: {
    beta: { type: "number", min: 0, max: 1 },
    square: { type: "boolean", default: false },
    weightDecay: WEIGHT_DECAY_ATTR,
  },
  checkAttrs: (a, ctx) => expectBetaBelowOne(ctx, "beta", a.beta),
  inferShape: ([state, grad, param], { weightDecay }, ctx) => {
    expectSameShape(ctx, "grad", state!, grad!);
    expectDecayParam(ctx, state!, param, weightDecay);
    return state!;
  },
});

export interface AdamStepAttrs {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** With `decoupled` (AdamW), param · (1 − lr · weightDecay) before the step; otherwise applied in the moments. */
  readonly weightDecay: number;
  readonly decoupled: boolean;
}

/**
 * Adam's parameter update, PyTorch `torch.optim.Adam` (AdamW with `decoupled`): with t the step (1 for the first),
 * param − (lr / (1 − beta1^t)) · m / (sqrt(v) / sqrt(1 − beta2^t) + eps), m and v the moments after this step's
 * update. `step` is a one-element tensor holding t, fed each step, so the graph does not change from step to step;
 * so is `lrScale` (optional), which multiplies lr for this step (a learning-rate schedule's factor: the lr of the step
 * is lr · lrScale, in the decoupled decay too). param, m, v of one shape, step and lrScale [] or [1] → param's shape.
 */
export const adamStepOp = defineOp<AdamStepAttrs>({
  kind: "adam-step",
  doc: "Adam's (or AdamW's) parameter update from the moments: param − lr/(1−β1^t) · m / (sqrt(v)/sqrt(1−β2^t) + eps), lr times the optional lrScale input.",
  inputs: [
    { name: "param", doc: "[...]" },
    { name: "m", doc: "[...], the first moment after this step" },
    { name: "v", doc: "[...], the second moment after this step" },
    STEP_INPUT,
    LR_SCALE_INPUT,
  ],
  attrs: {
    lr: { type: "number", min: 0 },
    beta1: { type: "number", default: 0.9, min: 0, max: 1 },
    beta2: { type: "number", default: 0.999, min: 0, max: 1 },
    eps: { type: "number", default: 1e-8, min: 0 },
    weightDecay: WEIGHT_DECAY_ATTR,
    decoupled: { type: "boolean", default: false },
  },
  checkAttrs: (a, ctx) => {
    checkLearningRate(a, ctx);
    expectBetaBelowOne(ctx, "beta1", a.beta1);
    expectBetaBelowOne(ctx, "beta2", a.beta2);
  },
  inferShape: ([param, m, v, step, lrScale], _attrs, ctx) => {
    expectSameShape(ctx, "m", param!, m!);
    expectSameShape(ctx, "v", param!, v!);
    expectOneElement(ctx, "step", "the step count is one number", step!);
    expectLrScale(ctx, lrScale);
    return param!;
  },
});
