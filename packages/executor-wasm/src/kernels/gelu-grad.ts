// gelu-grad: grad · gelu'(x) elementwise in either form ("none": Φ(x) + x·φ(x); "tanh"), on 4 float32 lanes in the
// module with the forward kernel's erfc and exp (assembly/gelu-grad.ts). Dense inputs are one span of elements; any
// other views go row by row. With a signal, a big call runs in chunks.
import { chunkedKernel, overRows } from "../chunks.js";
import { fillingChunked, requireInput } from "./adapter.js";
import { tanhFlag } from "./gelu.js";

/** Inputs: grad [...], x [...] (the forward input); attrs { approximate: "none" | "tanh" } → [...]. */
export const geluGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const tanh = tanhFlag(call);
  const out = ctx.output(call, x.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    if (x.dense && g.dense) {
      // Chunks of elements: any range of a span is itself a span.
      const part = (e0: number, e1: number) =>
        ctx.exports.geluGrad(g.address + e0 * 4, x.address + e0 * 4, out.address + e0 * 4, e1 - e0, tanh);
      return overRows(call, ctx, x.size, GELU_GRAD_WORK, part);
    }
    const n = x.shape[x.rank - 1]!;
    const part = (r0: number, r1: number) =>
      ctx.exports.geluGradStrided(g.address, ctx.desc(g, 0), x.address, ctx.desc(x, 1), out.address, tanh, r0, r1);
    return overRows(call, ctx, x.size / n, n * GELU_GRAD_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: as the forward gelu, plus one more exp for "none". */
const GELU_GRAD_WORK = 200;
