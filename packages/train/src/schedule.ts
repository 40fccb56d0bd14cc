// Learning-rate schedules: a function of the iteration (0 for the first step, nanoGPT's iter_num) to the learning
// rate. The rate is not rebuilt into the graph: the trainer feeds adam-step's one-element lrScale input each step
// (schedule(i) / the optimizer's lr), so a schedule costs one float upload per step.
import { GraphValidationError } from "@attngraph/graph";

/** Iteration (0 first) → learning rate, a finite number >= 0. */
export type LrSchedule = (iteration: number) => number;

export interface CosineScheduleOptions {
  /** The peak rate (nanoGPT's learning_rate). */
  readonly lr: number;
  /** The floor after the decay (min_lr). */
  readonly minLr: number;
  /** Iterations of linear warmup (warmup_iters). */
  readonly warmup: number;
  /** The iteration the cosine reaches minLr (lr_decay_iters), >= warmup. */
  readonly decaySteps: number;
}

/**
 * nanoGPT's `get_lr(it)`: linear warmup lr · (it + 1) / (warmup + 1) for it < warmup, then a cosine from lr down to
 * minLr at decaySteps, minLr after.
 */
export function cosineSchedule(options: CosineScheduleOptions): LrSchedule {
  const { lr, minLr, warmup, decaySteps } = options ?? ({} as CosineScheduleOptions);
  const bad = (field: string, expected: string, got: unknown): never => {
    throw new GraphValidationError(`cosineSchedule.${field}`, "invalid schedule option", expected, String(got));
  };
  if (typeof lr !== "number" || !(lr > 0) || !Number.isFinite(lr)) bad("lr", "a finite number > 0", lr);
  if (typeof minLr !== "number" || !(minLr >= 0 && minLr <= lr)) bad("minLr", `a number in [0, lr = ${lr}]`, minLr);
  if (!Number.isInteger(warmup) || warmup < 0) bad("warmup", "an integer >= 0", warmup);
  if (!Number.isInteger(decaySteps) || decaySteps < warmup)
    bad("decaySteps", `an integer >= warmup (${warmup})`, decaySteps);
  return (it) => {
    if (it < warmup) return (lr * (it + 1)) / (warmup + 1);
    if (it > decaySteps) return minLr;
    // decaySteps === warmup: no decay span, the step at it = warmup is the peak (ratio 0).
    const ratio = decaySteps === warmup ? 0 : (it - warmup) / (decaySteps - warmup);
    return minLr + 0.5 * (1 + Math.cos(Math.PI * ratio)) * (lr - minLr);
  };
}
