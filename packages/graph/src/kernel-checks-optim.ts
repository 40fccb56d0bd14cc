// The kernel checks of the optimizer ops (adam-moment, adam-step, sgd-momentum, sgd-step, clip-by-norm,
// grad-accumulate): attributes with the ops' declared defaults and the step count (see kernel-checks.ts).
import { AttnGraphError, describe } from "@attngraph/tensor";
import type { CallInfo } from "./kernel-checks.js";

// ---- optimizer ops (adam-moment, adam-step, sgd-momentum, sgd-step): attributes, each checked, absent ones taking
// the op's declared defaults, each error naming `<node>.<field>`; and the step count t ----

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
