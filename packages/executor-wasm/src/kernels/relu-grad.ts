// relu-grad: grad where y > 0 (or y is NaN), else 0, from the forward output as PyTorch's threshold_backward, on 4
// float32 lanes in the module (assembly/relu-grad.ts). Dense inputs are one span of elements; any other views go row
// by row. With a signal, a big call runs in chunks.
import { expectSameShape } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { fillingChunked, requireInput } from "./adapter.js";

/** Inputs: grad [...], y [...] (the forward output) → [...]. */
export const reluGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const y = requireInput(call, 1, "y");
  expectSameShape(call, "y", g, y);
  const out = ctx.output(call, y.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    if (y.dense && g.dense) {
      // Chunks of elements: any range of a span is itself a span.
      const part = (e0: number, e1: number) => ctx.exports.reluGrad(g.address + e0 * 4, y.address + e0 * 4, out.address + e0 * 4, e1 - e0);
      return overRows(call, ctx, y.size, RELU_GRAD_WORK, part);
    }
    const n = y.shape[y.rank - 1]!;
    const part = (r0: number, r1: number) => ctx.exports.reluGradStrided(g.address, ctx.desc(g, 0), y.address, ctx.desc(y, 1), out.address, r0, r1);
    return overRows(call, ctx, y.size / n, n * RELU_GRAD_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: two loads, a compare, a mask and a store (estimated). */
const RELU_GRAD_WORK = 3;
