// silu: x · sigmoid(x) elementwise in float64 in the module (assembly/silu.ts), row by row over any view; may run in
// place. With a signal, a big call runs in chunks of rows.
import { chunkedKernel, overRows } from "../chunks.js";
import { requireInput, writeInPlaceChunked } from "./adapter.js";

/** Input: x [...] → same shape. */
export const siluKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  return writeInPlaceChunked(call, ctx, x, (dst) => {
    if (dst.size === 0) return undefined;
    const n = x.rank === 0 ? 1 : x.shape[x.rank - 1]!;
    const part = (r0: number, r1: number) => ctx.exports.silu(x.address, ctx.desc(x), dst.address, r0, r1);
    return overRows(call, ctx, x.size / n, n * SILU_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: a scalar float64 exp and divide (estimated, as gelu's). */
export const SILU_WORK = 100;
