// silu-grad: grad · (s + x · s(1 − s)), s = sigmoid(x), elementwise in float64 in the module (assembly/silu.ts), row by
// row over any views. With a signal, a big call runs in chunks of rows.
import { expectSameShape } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { fillingChunked, requireInput } from "./adapter.js";
import { SILU_WORK } from "./silu.js";

/** Inputs: grad [...], x [...] (the forward input) → same shape. */
export const siluGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  expectSameShape(call, "x", g, x);
  const out = ctx.output(call, x.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    const n = x.rank === 0 ? 1 : x.shape[x.rank - 1]!;
    const part = (r0: number, r1: number) => ctx.exports.siluGrad(g.address, ctx.desc(g, 0), x.address, ctx.desc(x, 1), out.address, r0, r1);
    return overRows(call, ctx, x.size / n, n * SILU_WORK, part);
  });
});
