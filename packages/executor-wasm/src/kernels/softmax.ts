// softmax: softmax(scale · x) over the last axis in float64 (stable; −∞ → 0; a fully masked row → zeros; NaN or +∞ →
// a NaN row), as the CPU executor. May run in place.
import type { WasmKernel } from "../executor.js";
import { checkScale, requireInput, writeInPlace } from "./adapter.js";

/** Input: x [..., S]; attrs { scale } → same shape. */
export const softmaxKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const scale = checkScale(call);
  return writeInPlace(call, ctx, x, (dst) => {
    if (dst.size > 0) ctx.exports.softmax(x.address, ctx.desc(x), dst.address, scale);
  });
};
