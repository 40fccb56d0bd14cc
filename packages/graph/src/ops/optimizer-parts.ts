// What the optimizer ops (adam-moment, adam-step, sgd-momentum, sgd-step) declare alike: the step count and the
// learning-rate factor, one-element inputs fed each step so the graph never changes from step to step; weight decay
// and the parameter input it reads; the positive learning rate and the betas below 1. One definition, so the
// optimizers cannot drift apart in what they accept or in how a mistake is reported.
import type { SymShape } from "../dims.js";
import type { AttrSpec, OpContext, OpInput } from "../op-def.js";
import { expectOneElement, expectSameShape } from "./shape-checks.js";

export const STEP_INPUT: OpInput = { name: "step", doc: "[] or [1]: t, 1 for the first step" };

export const LR_SCALE_INPUT: OpInput = {
  name: "lrScale",
  optional: true,
  doc: "[] or [1]: this step's factor on lr (a schedule's), >= 0; absent = 1",
};

/** L2 weight decay (0 = none). */
export const WEIGHT_DECAY_ATTR: AttrSpec = { type: "number", default: 0, min: 0 };

/** The learning-rate factor, where one is connected, holds one number. */
export function expectLrScale(ctx: OpContext, lrScale: SymShape | undefined): void {
  if (lrScale) expectOneElement(ctx, "lrScale", "the learning-rate factor is one number", lrScale);
}

/** The parameter a moment or buffer folds weight decay from: `like`'s shape, and connected when weight decay is on. */
export function expectDecayParam(
  ctx: OpContext,
  like: SymShape,
  param: SymShape | undefined,
  weightDecay: number,
): void {
  if (param) expectSameShape(ctx, "param", like, param);
  if (weightDecay > 0 && !param) ctx.fail("param", "weight decay needs the parameter", "a param input", "none");
}

export function checkLearningRate(a: { readonly lr: number }, ctx: OpContext): void {
  if (!(a.lr > 0)) ctx.fail("lr", "the learning rate must be positive", "> 0", String(a.lr));
}

/** A moment's decay (`beta`, `beta1`, `beta2`): the attribute spec allows 1, the update does not. */
export function expectBetaBelowOne(ctx: OpContext, field: string, beta: number): void {
  if (beta >= 1) ctx.fail(field, `${field} must be below 1`, `0 <= ${field} < 1`, String(beta));
}
