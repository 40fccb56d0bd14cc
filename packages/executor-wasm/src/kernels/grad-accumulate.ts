// grad-accumulate: the running sum of a parameter's microbatch gradients (nanoGPT's gradient accumulation), scale ·
// grad at micro step k = 1, acc + scale · grad after, in float64 in the module (assembly/grad-norm.ts
// `accumulateScaled`), rounded once. k is one float read here from the module's memory and checked (an integer >= 1).
// Strided operands are copied dense first (gradients and the accumulator are almost always dense).
import { checkOptimizerStepValue, withCleanup, type GradAccumulateAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import type { WasmValue } from "../value.js";
import { attrsOf, fillingChunked, requireInput } from "./adapter.js";

/** Inputs: acc [...], grad [...], step [] or [1] (the micro step k, 1 first); attrs { scale } → [...]. */
export const gradAccumulateKernel = chunkedKernel((call, ctx) => {
  const acc = requireInput(call, 0, "acc");
  const grad = requireInput(call, 1, "grad");
  const step = requireInput(call, 2, "step");
  const { scale } = attrsOf<GradAccumulateAttrs>(call);
  const k = checkOptimizerStepValue(call, ctx.f32()[step.address / 4]!); // read from the module's memory
  const restart = k === 1 ? 1 : 0;
  const out = ctx.output(call, acc.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    const temps: WasmValue[] = [];
    const run = () => {
      const dense = (v: WasmValue, what: string): WasmValue => {
        if (v.dense) return v;
        const copy = ctx.dense(v, `${call.node} (dense copy of a strided ${what})`).value;
        temps.push(copy);
        return copy;
      };
      // At a restart acc is not read: no copy of it either.
      const a = restart ? acc : dense(acc, "acc");
      const g = dense(grad, "grad");
      const part = (e0: number, e1: number) =>
        ctx.exports.accumulateScaled(
          a.address + e0 * 4,
          g.address + e0 * 4,
          out.address + e0 * 4,
          e1 - e0,
          scale,
          restart,
        );
      return overRows(call, ctx, acc.size, ACCUMULATE_WORK, part);
    };
    return withCleanup(run, () => temps.forEach((t) => ctx.release(t)));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: two loads, a float64 multiply-add and a store. */
const ACCUMULATE_WORK = 2;
