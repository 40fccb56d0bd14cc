import { defineOp } from "../op-def.js";
import { expectOneElement, expectSameShape } from "./shape-checks.js";
import {
  checkLearningRate,
  expectDecayParam,
  expectLrScale,
  LR_SCALE_INPUT,
  STEP_INPUT,
  WEIGHT_DECAY_ATTR,
} from "./optimizer-parts.js";

export interface SgdMomentumAttrs {
  readonly momentum: number;
  readonly dampening: number;
  /** L2 penalty folded into the gradient, g + weightDecay · param (torch.optim.SGD's weight_decay). */
  readonly weightDecay: number;
}

/**
 * SGD's momentum buffer, PyTorch `torch.optim.SGD`: with d = grad + weightDecay · param, the new buffer is d at the
 * first step (t = 1, PyTorch's clone) and momentum · buf + (1 − dampening) · d after. buf, grad, param (needed only
 * with weightDecay) of one shape, step [] or [1] holding t → buf's shape.
 */
export const sgdMomentumOp = defineOp<SgdMomentumAttrs>({
  kind: "sgd-momentum",
  doc: "SGD's momentum buffer: d at step 1, then momentum · buf + (1 − dampening) · d, d = grad + weightDecay · param.",
  inputs: [
    { name: "buf", doc: "[...], the buffer so far (ignored at step 1)" },
    { name: "grad", doc: "[...]" },
    { name: "param", optional: true, doc: "[...], for weightDecay" },
    STEP_INPUT,
  ],
  attrs: {
    momentum: { type: "number", min: 0 },
    dampening: { type: "number", default: 0, min: 0, max: 1 },
    weightDecay: WEIGHT_DECAY_ATTR,
  },
  inferShape: ([buf, grad, param, step], { weightDecay }, ctx) => {
    expectSameShape(ctx, "grad", buf!, grad!);
    expectDecayParam(ctx, buf!, param, weightDecay);
    expectOneElement(ctx, "step", "the step count is one number", step!);
    return buf!;
  },
});

export interface SgdStepAttrs {
  readonly lr: number;
  readonly momentum: number;
  readonly nesterov: boolean;
  readonly weightDecay: number;
}

/**
 * SGD's parameter update, PyTorch `torch.optim.SGD`: with d = grad + weightDecay · param, param − lr · u where u = d
 * without momentum, buf (the buffer after this step) with it, and d + momentum · buf with `nesterov`; `lrScale`
 * (optional, one element fed each step) multiplies lr (a learning-rate schedule's factor).
 * param, grad, buf (with momentum) of one shape, lrScale [] or [1] → param's shape.
 */
export const sgdStepOp = defineOp<SgdStepAttrs>({
  kind: "sgd-step",
  doc: "SGD's update: param − lr · (d, or the momentum buffer, or d + momentum · buffer with nesterov), d = grad + weightDecay · param, lr times the optional lrScale input.",
  inputs: [
    { name: "param", doc: "[...]" },
    { name: "grad", doc: "[...]" },
    { name: "buf", optional: true, doc: "[...], the momentum buffer after this step (with momentum > 0)" },
    LR_SCALE_INPUT,
  ],
  attrs: {
    lr: { type: "number", min: 0 },
    momentum: { type: "number", default: 0, min: 0 },
    nesterov: { type: "boolean", default: false },
    weightDecay: WEIGHT_DECAY_ATTR,
  },
  checkAttrs: (a, ctx) => {
    checkLearningRate(a, ctx);
    if (a.nesterov && a.momentum === 0)
      ctx.fail("nesterov", "Nesterov momentum needs a momentum", "momentum > 0", "momentum 0");
  },
  inferShape: ([param, grad, buf, lrScale], { momentum }, ctx) => {
    expectSameShape(ctx, "grad", param!, grad!);
    expectLrScale(ctx, lrScale);
    if (buf) expectSameShape(ctx, "buf", param!, buf);
    if (momentum > 0 && !buf) ctx.fail("buf", "momentum needs the buffer", "a buf input", "none");
    return param!;
  },
});
