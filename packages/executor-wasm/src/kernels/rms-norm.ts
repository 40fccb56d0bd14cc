// rms-norm: LlamaRMSNorm over the last axis, in float64 in the module (assembly/rms-norm.ts). x may be any view; weight
// is optional [E]. May run in place (the op declares inPlace: 0). With a signal, a big call runs in chunks of rows.
import type { RmsNormAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, optionalInput, requireInput, writeInPlaceChunked } from "./adapter.js";

/** Inputs: x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const w = optionalInput(call, 1, "weight");
  const { eps } = attrsOf<RmsNormAttrs>(call);
  const e = x.shape[x.rank - 1]!;
  const rows = e === 0 ? 0 : x.size / e;
  return writeInPlaceChunked(call, ctx, x, (dst) => {
    if (dst.size === 0) return undefined;
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    const part = (r0: number, r1: number) =>
      ctx.exports.rmsNorm(x.address, ctx.desc(x), dst.address, w?.address ?? 0, w?.strides[0] ?? 0, eps, r0, r1);
    return overRows(call, ctx, rows, e * RMS_NORM_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: two scalar float64 passes (estimated, as layer-norm's). */
export const RMS_NORM_WORK = 20;
