// linear-gelu: the fused first half of a transformer MLP, gelu(x · Wᵀ + b). The projection's product (projection.ts,
// the 5×8 tile) writes each chunk of rows, and the module's gelu (assembly/gelu.ts) then runs in place on those rows:
// no pre-activation value (one output-sized buffer fewer than the pair), and the numbers are the unfused pair's bit
// for bit (gelu of the float32 pre-activation, lane by lane, so where the chunks and vectors fall does not matter).
import { chunkedKernel } from "../chunks.js";
import { GELU_WORK, tanhFlag } from "./gelu.js";
import { linear } from "./projection.js";

/** Inputs: x [..., In], weight [Out, In], optional bias [Out]; attrs { approximate: "none" | "tanh" } → [..., Out]. */
export const linearGeluKernel = chunkedKernel((call, ctx) => {
  const tanh = tanhFlag(call);
  return linear(call, ctx, {
    work: GELU_WORK,
    rows: (out, r0, r1) => {
      // The output is dense [rows, Out]: rows [r0, r1) are one span.
      const n = out.shape[out.rank - 1]!;
      ctx.exports.gelu(out.address + r0 * n * 4, out.address + r0 * n * 4, (r1 - r0) * n, tanh);
    },
  });
});
