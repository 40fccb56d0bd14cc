// softmax: softmax(scale · x) over the last axis in float64 (stable; −∞ → 0; a fully masked row → zeros; NaN or +∞ →
// a NaN row), as the CPU executor. May run in place. With a signal, a big call runs in chunks of rows (chunks.ts).
import type { SoftmaxAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { attrsOf, requireInput } from "./adapter.js";
import { inPlaceRows } from "./in-place-rows.js";

/** Input: x [..., S]; attrs { scale } → same shape. */
export const softmaxKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { scale } = attrsOf<SoftmaxAttrs>(call);
  return inPlaceRows(call, ctx, x, SOFTMAX_WORK, (dst, r0, r1) =>
    ctx.exports.softmax(x.address, ctx.desc(x), dst.address, scale, r0, r1),
  );
});

/** Work per element in multiply-adds of the SIMD matmul: two scalar passes and a float64 exp (measured ≈ 115, Node 20). */
const SOFTMAX_WORK = 120;
