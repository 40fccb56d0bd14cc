// dropout with the counter-based generator of the spec (packages/executor-cpu/README.md): the module computes the
// same bits as the CPU executor, so masks are bit-identical. Eval mode or rate 0 is the identity. May run in place.
import { dropoutThreshold, fmix32, type DropoutAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrsOf, requireInput, writeInPlace } from "./adapter.js";

/** Input: x; attrs { rate, seed, training } → same shape. */
export const dropoutKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { rate, seed, training } = attrsOf<DropoutAttrs>(call);
  if (!training || rate === 0) {
    // The identity: x itself (one more reference), or a copy in `call.out` when the planner gave one.
    if (call.out === undefined) return ctx.view(x, x.shape, x.strides);
    return writeInPlace(call, ctx, x, (dst) => {
      if (dst.address !== x.address || !x.dense) ctx.copy(x, dst);
    });
  }
  return writeInPlace(call, ctx, x, (dst) => {
    if (dst.size > 0)
      ctx.exports.dropout(
        x.address,
        ctx.desc(x),
        dst.address,
        fmix32(seed),
        dropoutThreshold(rate),
        Math.fround(1 / (1 - rate)),
      );
  });
};
