// clip-by-norm: one gradient scaled as torch.nn.utils.clip_grad_norm_ scales every one, x · min(1, maxNorm /
// (sqrt(total) + eps)), total from sum-squares. The coefficient is taken here in float64 from the one float of the
// total in the module's memory; the products in the module (assembly/grad-norm.ts `scaleBy`), each rounded once. A
// strided x is copied dense first.
import { withCleanup, type ClipByNormAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import type { WasmValue } from "../value.js";
import { attrsOf, fillingChunked, requireInput } from "./adapter.js";

/** Inputs: x [...], sumSquares [] or [1]; attrs { maxNorm, eps } → x's shape. */
export const clipByNormKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const total = requireInput(call, 1, "sumSquares");
  const { maxNorm, eps } = attrsOf<ClipByNormAttrs>(call);
  const raw = maxNorm / (Math.sqrt(ctx.f32()[total.address / 4]!) + eps);
  const coef = raw > 1 ? 1 : raw; // clip_coef_clamped; NaN stays NaN, as torch's clamp leaves it
  const out = ctx.output(call, x.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    let temp: WasmValue | undefined;
    const run = () => {
      if (!x.dense) temp = ctx.dense(x, `${call.node} (dense copy of a strided x)`).value;
      const xd = temp ?? x;
      const part = (e0: number, e1: number) =>
        ctx.exports.scaleBy(xd.address + e0 * 4, out.address + e0 * 4, e1 - e0, coef);
      return overRows(call, ctx, x.size, CLIP_WORK, part);
    };
    return withCleanup(run, () => temp && ctx.release(temp));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: a load, a float64 multiply and a store. */
const CLIP_WORK = 2;
