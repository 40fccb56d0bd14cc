// cross-entropy-grad: the logits gradient of cross-entropy, per counted position (softmax(logits) − onehot(target)) · g
// in float64 in the module (assembly/cross-entropy-grad.ts), g the loss gradient (absent = 1; "mean" divides it by the
// count of counted positions, "none" takes each position's). Ignored positions get a row of 0. Every target is checked
// on the host first by the forward kernel's lossTargets (findBadIndex), before anything is allocated or written.
// logits, targets and grad may be any views (a strided per-position grad is copied dense first). With a signal, a big
// call runs in chunks of positions.
import { withCleanup } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { lossTargets, targetFields, writeTargets } from "./cross-entropy.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, optionalInput } from "./adapter.js";

/**
 * Inputs: logits [..., V], targets [...] int32, optional grad ([] for "mean"/"sum", [...] for "none");
 * attrs { ignoreIndex, reduction } → [..., V].
 */
export const crossEntropyGradKernel = chunkedKernel((call, ctx) => {
  const { logits, targets, ignoreIndex, reduction, nv, counted } = lossTargets(call, ctx);
  const grad = optionalInput(call, 2, "grad");
  const out = ctx.output(call, logits.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    let temp: WasmValue | undefined;
    const run = () => {
      let g = grad;
      if (g !== undefined && reduction === "none" && !g.dense) {
        temp = ctx.dense(g, `${call.node} (dense copy of a strided grad)`).value;
        g = temp;
      }
      const gAddress = g?.address ?? 0;
      const gStride = reduction === "none" ? 1 : 0;
      const div = reduction === "mean" ? Math.max(1, counted) : 1;
      // Descriptors are shared: both written again for each chunk (another kernel may run in between).
      const part = (r0: number, r1: number) =>
        ctx.exports.crossEntropyGrad(
          logits.address,
          ctx.desc(logits, 0),
          writeTargets(ctx, ctx.params, {
            ...targetFields(ctx, targets, ignoreIndex),
            grad: gAddress,
            gstride: gStride,
            div,
          }),
          out.address,
          r0,
          r1,
        );
      return overRows(call, ctx, targets.size, nv * CROSS_ENTROPY_GRAD_WORK, part);
    };
    return withCleanup(run, () => temp && ctx.release(temp));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: as the forward (two passes and a float64 exp) plus a scaling pass. */
const CROSS_ENTROPY_GRAD_WORK = 100;
