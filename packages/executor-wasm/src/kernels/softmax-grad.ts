// softmax-grad: the input gradient of y = softmax(scale · x) over the last axis, from y: dx = scale · y ⊙ (grad −
// Σ_row grad ⊙ y), in float64 in the module (assembly/softmax-grad.ts). A fully masked row (y all 0) gives exactly 0
// whatever its grad; NaN elsewhere propagates by the formula. y and grad may be any views. With a signal, a big call
// runs in chunks of rows (chunks.ts).
import type { SoftmaxGradAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, fillingChunked, requireInput } from "./adapter.js";

/** Inputs: y [..., S] (the softmax's output), grad [..., S]; attrs { scale } → [..., S]. */
export const softmaxGradKernel = chunkedKernel((call, ctx) => {
  const y = requireInput(call, 0, "y");
  const g = requireInput(call, 1, "grad");
  const { scale } = attrsOf<SoftmaxGradAttrs>(call);
  const n = y.shape[y.rank - 1]!;
  const rows = n === 0 ? 0 : y.size / n;
  const out = ctx.output(call, y.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    const part = (r0: number, r1: number) =>
      ctx.exports.softmaxGrad(y.address, ctx.desc(y, 0), g.address, ctx.desc(g, 1), out.address, scale, r0, r1);
    return overRows(call, ctx, rows, n * SOFTMAX_GRAD_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: two float64 passes over two rows. */
const SOFTMAX_GRAD_WORK = 8;
