// mask-grad: the input gradient of mask and ALiBi, read from their output: 0 where `masked` is −∞ (a hidden score gets
// no gradient), scale · grad everywhere else (NaN and +∞ included), one float64 product rounded once, in the module
// (assembly/softmax-grad.ts `maskGrad`). Both inputs may be any views. With a signal, a big call runs in chunks of rows.
import type { MaskGradAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, fillingChunked, requireInput } from "./adapter.js";

/** Inputs: grad [...], masked [...] (the forward output); attrs { scale } → [...]. */
export const maskGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const m = requireInput(call, 1, "masked");
  const { scale } = attrsOf<MaskGradAttrs>(call);
  const n = g.rank === 0 ? 1 : g.shape[g.rank - 1]!;
  const rows = n === 0 ? 0 : g.size / n;
  const out = ctx.output(call, g.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    const part = (r0: number, r1: number) =>
      ctx.exports.maskGrad(g.address, ctx.desc(g, 0), m.address, ctx.desc(m, 1), out.address, scale, r0, r1);
    return overRows(call, ctx, rows, n * MASK_GRAD_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: two loads, a compare and a float64 product. */
const MASK_GRAD_WORK = 3;
