// adam-step: Adam's parameter update (torch.optim.Adam; AdamW with `decoupled`), p − (lr / (1 − β1^t)) · m /
// (sqrt(v) / sqrt(1 − β2^t) + eps) with p = param (· (1 − lr · weightDecay) with `decoupled`), in float64 in the module
// (assembly/adam.ts `adamStep`, β^t there too), rounded once. The step t is one float read here from the module's
// memory and checked (an integer >= 1). All three dense: one span of elements; else param and m go row by row through
// their descriptors and a strided v is copied dense first. With a signal, a big call runs in chunks.
import {
  checkAdamStepAttrs,
  checkLrScaleValue,
  checkOptimizerStepValue,
  expectSameShape,
  expectScalarShape,
  expectStepShape,
  withCleanup,
} from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { writeOptim } from "./optim-params.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, optionalInput, requireInput } from "./adapter.js";

/**
 * Inputs: param [...], m [...], v [...], step [] or [1] (t, 1 for the first step), lrScale [] or [1] (optional, this
 * step's factor on lr, read here like t); attrs { lr, beta1, beta2, eps, weightDecay, decoupled } → [...].
 */
export const adamStepKernel = chunkedKernel((call, ctx) => {
  const p = requireInput(call, 0, "param");
  const m = requireInput(call, 1, "m");
  const v = requireInput(call, 2, "v");
  const step = requireInput(call, 3, "step");
  const lrScale = optionalInput(call, 4, "lrScale");
  const { lr: baseLr, beta1, beta2, eps, weightDecay, decoupled } = checkAdamStepAttrs(call);
  expectSameShape(call, "m", p, m);
  expectSameShape(call, "v", p, v);
  expectStepShape(call, step);
  const t = checkOptimizerStepValue(call, ctx.f32()[step.address / 4]!); // read from the module's memory
  if (lrScale) expectScalarShape(call, "lrScale", lrScale);
  // A schedule scales lr wherever it appears, the decoupled decay included (torch reads group["lr"] for both).
  const lr = lrScale ? baseLr * checkLrScaleValue(call, ctx.f32()[lrScale.address / 4]!) : baseLr;
  const dec = decoupled ? 1 : 0;
  const out = ctx.output(call, p.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    let temp: WasmValue | undefined;
    const run = () => {
      if (!v.dense) temp = ctx.dense(v, `${call.node} (dense copy of a strided v)`).value;
      const vd = temp ?? v;
      if (p.dense && m.dense) {
        // Chunks of elements: any range of a span is itself a span.
        const part = (e0: number, e1: number) =>
          ctx.exports.adamStep(
            p.address + e0 * 4,
            m.address + e0 * 4,
            vd.address + e0 * 4,
            out.address + e0 * 4,
            e1 - e0,
            writeOptim(ctx, ctx.params, { t, lr, beta1, beta2, eps, wd: weightDecay, flag: dec }),
          );
        return overRows(call, ctx, p.size, ADAM_STEP_WORK, part);
      }
      const n = p.shape[p.rank - 1]!;
      // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
      const part = (r0: number, r1: number) =>
        ctx.exports.adamStepStrided(
          p.address,
          ctx.desc(p, 0),
          m.address,
          ctx.desc(m, 1),
          out.address,
          writeOptim(ctx, ctx.params, { extra: vd.address, t, lr, beta1, beta2, eps, wd: weightDecay, flag: dec }),
          r0,
          r1,
        );
      return overRows(call, ctx, p.size / n, n * ADAM_STEP_WORK, part);
    };
    return withCleanup(run, () => temp && ctx.release(temp));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: three loads, a float64 sqrt and two divisions. */
const ADAM_STEP_WORK = 15;
