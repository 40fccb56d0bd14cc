// Gradient accumulation over microbatches, as nanoGPT does it (loss / n per micro step, .grad summed by backward):
// the running sum of the scaled gradients, restarted by the first micro step of each update, so nothing has to zero it
// between updates. The micro step k is an input (like the optimizers' step t), so one graph serves every micro step.
import { defineOp } from "../op-def.js";
import { expectOneElement, expectSameShape } from "./shape-checks.js";

export interface GradAccumulateAttrs {
  /** Each microbatch's gradient is multiplied by it: 1 / n for n microbatches (nanoGPT's loss / n). */
  readonly scale: number;
}

/**
 * k = 1: scale · grad; k > 1: acc + scale · grad, with k the one element of `step` (the micro step, 1 first).
 * acc, grad of one shape, step [] or [1] → that shape.
 */
export const gradAccumulateOp = defineOp<GradAccumulateAttrs>({
  kind: "grad-accumulate",
  doc: "Gradient accumulation: scale · grad at micro step 1, acc + scale · grad after (acc not read at step 1).",
  inputs: [
    { name: "acc", doc: "[...], the sum so far (ignored at micro step 1)" },
    { name: "grad", doc: "[...], this microbatch's gradient" },
    { name: "step", doc: "[] or [1]: the micro step k, 1 for the first of an update" },
  ],
  attrs: {
    scale: { type: "number", min: 0 },
  },
  checkAttrs: (a, ctx) => {
    if (!(a.scale > 0) || !Number.isFinite(a.scale))
      ctx.fail("scale", "the gradient scale must be positive", "a finite number > 0", String(a.scale));
  },
  inferShape: ([acc, grad, step], _attrs, ctx) => {
    expectSameShape(ctx, "grad", acc!, grad!);
    expectOneElement(ctx, "step", "the micro step is one number", step!);
    return acc!;
  },
});
