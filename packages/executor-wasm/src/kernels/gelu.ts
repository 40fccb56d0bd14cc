// gelu: GELU elementwise in either form (approximate "none": the erf form; "tanh"), on 4 float32 lanes in the module
// (assembly/gelu.ts, written so that neither form cancels for negative x). Any view; may run in place. A dense input is
// one span of elements, whatever its shape; a strided one goes row by row. With a signal, a big call runs in chunks.
import type { GeluAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, requireInput, writeInPlaceChunked, type Call } from "./adapter.js";

/** Input: x [...]; attrs { approximate: "none" | "tanh" } → same shape. */
export const geluKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const tanh = tanhFlag(call);
  return writeInPlaceChunked(call, ctx, x, (dst) => {
    if (dst.size === 0) return undefined;
    if (x.dense) {
      // Chunks of elements: any range of a span is itself a span.
      const part = (e0: number, e1: number) =>
        ctx.exports.gelu(x.address + e0 * 4, dst.address + e0 * 4, e1 - e0, tanh);
      return overRows(call, ctx, x.size, GELU_WORK, part);
    }
    const n = x.shape[x.rank - 1]!;
    const part = (r0: number, r1: number) => ctx.exports.geluStrided(x.address, ctx.desc(x), dst.address, tanh, r0, r1);
    return overRows(call, ctx, x.size / n, n * GELU_WORK, part);
  });
});

/** The module's form flag of a gelu, gelu-grad or linear-gelu call: 1 for approximate "tanh", 0 for "none". */
export function tanhFlag(call: Call): number {
  return attrsOf<GeluAttrs>(call).approximate === "tanh" ? 1 : 0;
}

/** Work per element in multiply-adds of the SIMD matmul: two vector exps and two divisions per 4 lanes (measured ≈ 145 for "none", ≈ 60 for "tanh", Node 20). */
export const GELU_WORK = 150;
