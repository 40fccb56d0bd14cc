// rms-norm: LlamaRMSNorm over the last axis, in float64 in the module (assembly/rms-norm.ts). x may be any view; weight
// is optional [E]. May run in place (the op declares inPlace: 0). With a signal, a big call runs in chunks of rows.
import type { RmsNormAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { attrsOf, optionalInput, requireInput } from "./adapter.js";
import { inPlaceRows } from "./in-place-rows.js";

/** Inputs: x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const w = optionalInput(call, 1, "weight");
  const { eps } = attrsOf<RmsNormAttrs>(call);
  return inPlaceRows(call, ctx, x, RMS_NORM_WORK, (dst, r0, r1) =>
    ctx.exports.rmsNorm(x.address, ctx.desc(x), dst.address, w?.address ?? 0, w?.strides[0] ?? 0, eps, r0, r1),
  );
});

/** Work per element in multiply-adds of the SIMD matmul: two scalar float64 passes (estimated, as layer-norm's). */
export const RMS_NORM_WORK = 20;
