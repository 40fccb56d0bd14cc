// relu: max(x, 0) elementwise with NaN kept (torch.relu), on 4 float32 lanes in the module (assembly/relu.ts). Any
// view; may run in place. A dense input is one span of elements, whatever its shape; a strided one goes row by row.
// With a signal, a big call runs in chunks.
import { chunkedKernel, overRows } from "../chunks.js";
import { requireInput, writeInPlaceChunked } from "./adapter.js";

/** Input: x [...] → same shape. */
export const reluKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  return writeInPlaceChunked(call, ctx, x, (dst) => {
    if (dst.size === 0) return undefined;
    if (x.dense) {
      // Chunks of elements: any range of a span is itself a span.
      const part = (e0: number, e1: number) => ctx.exports.relu(x.address + e0 * 4, dst.address + e0 * 4, e1 - e0);
      return overRows(call, ctx, x.size, RELU_WORK, part);
    }
    const n = x.shape[x.rank - 1]!;
    const part = (r0: number, r1: number) => ctx.exports.reluStrided(x.address, ctx.desc(x), dst.address, r0, r1);
    return overRows(call, ctx, x.size / n, n * RELU_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: a load, a compare, a mask and a store (estimated, as add's). */
const RELU_WORK = 3;
