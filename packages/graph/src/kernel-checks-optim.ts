// The kernel checks of the optimizer ops (adam-moment, adam-step, sgd-momentum, sgd-step, clip-by-norm,
// grad-accumulate): attributes with the ops' declared defaults and the step count (see kernel-checks.ts).
import { AttnGraphError, ShapeError, describe, formatShape } from "@attngraph/tensor";
import type { AdamMomentAttrs, AdamStepAttrs } from "./ops/adam.js";
import type { ClipByNormAttrs } from "./ops/grad-norm.js";
import type { GradAccumulateAttrs } from "./ops/grad-accumulate.js";
import type { SgdMomentumAttrs, SgdStepAttrs } from "./ops/sgd.js";
import { type CallInfo, type Shaped, attrError } from "./kernel-checks.js";

// ---- optimizer ops (adam-moment, adam-step, sgd-momentum, sgd-step): attributes, each checked, absent ones taking
// the op's declared defaults, each error naming `<node>.<field>`; and the step count t ----

/** The number attribute `field`, absent = `fallback` (undefined: required), for which `ok` holds. */
function numberAttr(
  call: CallInfo,
  field: string,
  fallback: number | undefined,
  ok: (v: number) => boolean,
  expected: string,
): number {
  const v = fallback === undefined ? call.attrs[field] : (call.attrs[field] ?? fallback);
  if (typeof v !== "number" || !ok(v)) throw attrError(call, field, expected, v);
  return v;
}

/** The boolean attribute `field`, absent = false. */
function boolAttr(call: CallInfo, field: string): boolean {
  const v = call.attrs[field] ?? false;
  if (typeof v !== "boolean") throw attrError(call, field, "true or false", v);
  return v;
}

const positive = (call: CallInfo, field: string): number =>
  numberAttr(call, field, undefined, (v) => v > 0 && v < Infinity, "a finite number > 0");
const nonNegative = (call: CallInfo, field: string, fallback?: number): number =>
  numberAttr(call, field, fallback, (v) => v >= 0 && v < Infinity, "a finite number >= 0");
const belowOne = (call: CallInfo, field: string, fallback?: number): number =>
  numberAttr(call, field, fallback, (v) => v >= 0 && v < 1, `a number with 0 <= ${field} < 1`);

/** adam-moment: beta in [0, 1) (required), square a boolean (false), weightDecay a finite number >= 0 (0). */
export function checkAdamMomentAttrs(call: CallInfo): AdamMomentAttrs {
  const beta = belowOne(call, "beta");
  const square = boolAttr(call, "square");
  const weightDecay = nonNegative(call, "weightDecay", 0);
  return { beta, square, weightDecay };
}

/**
 * adam-step: lr a finite number > 0 (required), beta1 and beta2 in [0, 1) (0.9, 0.999), eps and weightDecay finite
 * numbers >= 0 (1e-8, 0), decoupled a boolean (false).
 */
export function checkAdamStepAttrs(call: CallInfo): AdamStepAttrs {
  const lr = positive(call, "lr");
  const beta1 = belowOne(call, "beta1", 0.9);
  const beta2 = belowOne(call, "beta2", 0.999);
  const eps = nonNegative(call, "eps", 1e-8);
  const weightDecay = nonNegative(call, "weightDecay", 0);
  const decoupled = boolAttr(call, "decoupled");
  return { lr, beta1, beta2, eps, weightDecay, decoupled };
}

/** sgd-momentum: momentum a finite number >= 0 (required), dampening in [0, 1] (0), weightDecay a finite number >= 0 (0). */
export function checkSgdMomentumAttrs(call: CallInfo): SgdMomentumAttrs {
  const momentum = nonNegative(call, "momentum");
  const dampening = numberAttr(call, "dampening", 0, (v) => v >= 0 && v <= 1, "a number with 0 <= dampening <= 1");
  const weightDecay = nonNegative(call, "weightDecay", 0);
  return { momentum, dampening, weightDecay };
}

/**
 * sgd-step: lr a finite number > 0 (required), momentum and weightDecay finite numbers >= 0 (0, 0), nesterov a
 * boolean (false) that needs momentum > 0.
 */
export function checkSgdStepAttrs(call: CallInfo): SgdStepAttrs {
  const lr = positive(call, "lr");
  const momentum = nonNegative(call, "momentum", 0);
  const nesterov = boolAttr(call, "nesterov");
  const weightDecay = nonNegative(call, "weightDecay", 0);
  if (nesterov && momentum === 0)
    throw attrError(call, "nesterov", "false with momentum 0 (Nesterov momentum needs a momentum)", nesterov);
  return { lr, momentum, nesterov, weightDecay };
}

/** clip-by-norm: maxNorm a finite number > 0 (required), eps a finite number >= 0 (1e-6, torch's). */
export function checkClipByNormAttrs(call: CallInfo): ClipByNormAttrs {
  const maxNorm = positive(call, "maxNorm");
  const eps = nonNegative(call, "eps", 1e-6);
  return { maxNorm, eps };
}

/** grad-accumulate: scale a finite number > 0 (required). */
export function checkGradAccumulateAttrs(call: CallInfo): GradAccumulateAttrs {
  return { scale: positive(call, "scale") };
}

/** A one-element input (adam-step's lrScale, sum-squares' acc, clip-by-norm's sumSquares): [] or [1], else a shape error naming `<node>.<field>`. */
export function expectScalarShape(call: CallInfo, field: string, x: Shaped): void {
  const s = x.shape;
  if (!(s.length === 0 || (s.length === 1 && s[0] === 1)))
    throw new ShapeError(
      `${call.node}.${field}`,
      `op ${call.kind} takes ${field} as one number`,
      "[] or [1]",
      formatShape(s),
    );
}

/**
 * adam-step's learning-rate factor as an executor read it: a finite number >= 0, returned; else an "input" error naming
 * `<node>.lrScale` (a schedule that returned NaN must not train on NaN).
 */
export function checkLrScaleValue(call: CallInfo, s: number): number {
  if (Number.isFinite(s) && s >= 0) return s;
  const subject = `${call.node}.lrScale`;
  const expected = "a finite number >= 0";
  const got = String(s);
  throw new AttnGraphError(
    "input",
    describe(subject, `invalid learning-rate factor of op ${call.kind}`, expected, got),
    { subject, expected, got },
  );
}

/** An optimizer's step input (adam-step, sgd-momentum) must be one number, shape [] or [1]: a shape error naming `<node>.step`. */
export function expectStepShape(call: CallInfo, step: Shaped): void {
  const s = step.shape;
  if (!(s.length === 0 || (s.length === 1 && s[0] === 1)))
    throw new ShapeError(
      `${call.node}.step`,
      `op ${call.kind} takes the step count as one number`,
      "[] or [1]",
      formatShape(s),
    );
}

/**
 * The step count t an executor read from an optimizer's step input (from its memory, or the host copy of an upload):
 * an integer >= 1, returned; else an "input" error naming `<node>.step`.
 */
export function checkOptimizerStepValue(call: CallInfo, t: number): number {
  if (Number.isInteger(t) && t >= 1) return t;
  const subject = `${call.node}.step`;
  const expected = "an integer >= 1 (1 for the first step)";
  const got = String(t);
  throw new AttnGraphError("input", describe(subject, `invalid step count of op ${call.kind}`, expected, got), {
    subject,
    expected,
    got,
  });
}
