// adam-step: Adam's parameter update (torch.optim.Adam; AdamW with `decoupled`), p − (lr / (1 − β1^t)) · m /
// (sqrt(v) / sqrt(1 − β2^t) + eps) with p = param (· (1 − lr · weightDecay) with `decoupled`), in float64 in the module
// (assembly/adam.ts `adamStep`, β^t there too), rounded once. The step t is one float read here from the module's
// memory and checked (an integer >= 1). All three dense: one span of elements; else param and m go row by row through
// their descriptors and a strided v is copied dense first. With a signal, a big call runs in chunks.
import { checkLrScaleValue, checkOptimizerStepValue, type AdamStepAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { runOptimUpdate } from "./optim-update.js";
import { attrsOf, optionalInput, requireInputs } from "./adapter.js";

/**
 * Inputs: param [...], m [...], v [...], step [] or [1] (t, 1 for the first step), lrScale [] or [1] (optional, this
 * step's factor on lr, read here like t); attrs { lr, beta1, beta2, eps, weightDecay, decoupled } → [...].
 */
export const adamStepKernel = chunkedKernel((call, ctx) => {
  const [p, m, v, step] = requireInputs(call, "param", "m", "v", "step");
  const lrScale = optionalInput(call, 4, "lrScale");
  const { lr: baseLr, beta1, beta2, eps, weightDecay, decoupled } = attrsOf<AdamStepAttrs>(call);
  const t = checkOptimizerStepValue(call, ctx.f32()[step.address / 4]!); // read from the module's memory
  // A schedule scales lr wherever it appears, the decoupled decay included (torch reads group["lr"] for both).
  const lr = lrScale ? baseLr * checkLrScaleValue(call, ctx.f32()[lrScale.address / 4]!) : baseLr;
  const dec = decoupled ? 1 : 0;
  return runOptimUpdate(
    call,
    ctx,
    { span: "adamStep", rows: "adamStepStrided" },
    { x: p, y: m, z: v, zName: "v", readsX: true, readsY: true },
    { t, lr, beta1, beta2, eps, wd: weightDecay, flag: dec },
    ADAM_STEP_WORK,
  );
});

/** Work per element in multiply-adds of the SIMD matmul: three loads, a float64 sqrt and two divisions. */
const ADAM_STEP_WORK = 15;
