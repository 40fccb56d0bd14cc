// sum-squares: acc + Σ x², one gradient's squared L2 norm added to the running total of global gradient-norm clipping,
// in float64 in the module (assembly/grad-norm.ts `sumSquares`), chunk after chunk in order, stored as float32 once.
// A strided x is copied dense first (a gradient is almost always dense). The one-element acc and result are read and
// written here in the module's memory: no round trip, the memory is this process's.
import { withCleanup } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, optionalInput, requireInput } from "./adapter.js";

/** Inputs: x [...], acc [] or [1] (optional, the total so far) → [1]. */
export const sumSquaresKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const acc = optionalInput(call, 1, "acc");
  const out = ctx.output(call, [1]);
  let sum = acc ? ctx.f32()[acc.address / 4]! : 0;
  let temp: WasmValue | undefined;
  const run = () => {
    if (!x.dense) temp = ctx.dense(x, `${call.node} (dense copy of a strided x)`).value;
    const xd = temp ?? x;
    const part = (e0: number, e1: number) => {
      sum += ctx.exports.sumSquares(xd.address + e0 * 4, e1 - e0);
    };
    const pending = overRows(call, ctx, x.size, SUM_SQUARES_WORK, part);
    const store = () => {
      ctx.f32()[out.address / 4] = sum; // f32() again: a chunk may have grown the memory
    };
    if (pending !== undefined) return pending.then(store);
    store();
    return undefined;
  };
  return fillingChunked(call, ctx, out, () => withCleanup(run, () => temp && ctx.release(temp)));
});

/** Work per element in multiply-adds of the SIMD matmul: a load and a float64 multiply-add. */
const SUM_SQUARES_WORK = 2;
