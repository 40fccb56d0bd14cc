import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";
import { DROPOUT_ATTRS, expectDropoutRate } from "./attention-parts.js";

export interface DropoutAttrs {
  /** Probability of zeroing an element, in [0, 1). */
  readonly rate: number;
  /**
   * Seed of the counter-based generator. Each run folds its dropout step into it (`dropoutSeedAt(seed, step)`, step 0:
   * the seed itself), so the same seed and step give the same mask on every executor, and each step a new one.
   */
  readonly seed: number;
  /** false (eval) = identity. */
  readonly training: boolean;
}

/** Identity in eval mode; in training, zeroes elements by a counter-based generator and scales the rest by 1/(1-rate). */
export const dropoutOp = defineOp<DropoutAttrs>({
  kind: "dropout",
  doc: "Identity in eval; in training a counter-based mask (pure function of seed and element index), kept × 1/(1-rate).",
  inputs: [{ name: "x" }],
  attrs: {
    rate: DROPOUT_ATTRS.dropoutRate,
    seed: { ...DROPOUT_ATTRS.dropoutSeed, doc: "folded with the run's dropout step (see dropoutSeedAt)" },
    training: DROPOUT_ATTRS.training,
  },
  checkAttrs: (a, ctx) => expectDropoutRate(ctx, "rate", a.rate),
  inPlace: 0,
  inferShape: ([x]) => x!,
  // The mask is a pure function of the seed and the element index, so the same op on the gradient drops the same
  // elements and scales the kept ones by the same 1/(1 − rate).
  vjp: (ctx) => [ctx.addGrad(0, "dropout", { x: gradOf(ctx, "dropout") }, { ...ctx.attrs })],
});
