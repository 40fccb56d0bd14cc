// The module calls layer norm's and RMS norm's backward kernels make (layer-norm-grad.ts, rms-norm-grad.ts), written
// once: the two norms' ops take the same inputs (grad, x, optional weight) and attribute (eps), and differ only in the
// module's export and its work per element. The input gradient goes row by row into a new [..., E]; the weight
// gradient sums over rows into float64 accumulators kept in a block of their own across chunks and rounded once at the
// end. With a signal, a big call runs in chunks of rows (chunks.ts).
import { withCleanup, type LayerNormGradAttrs } from "@attngraph/graph";
import { overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { writeAffine } from "./layer-norm.js";
import { attrsOf, fillingChunked, optionalInput, requireInput, type Call } from "./adapter.js";

/** A norm backward's inputs grad and x [..., E] (one shape, by the shape rule), eps, and the row length E and count. */
function rowsOf(call: Call) {
  const g = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const e = x.shape[x.rank - 1]!;
  // RmsNormGradAttrs is the same { eps }.
  return { g, x, eps: attrsOf<LayerNormGradAttrs>(call).eps, e, rows: e === 0 ? 0 : x.size / e };
}

/** One norm's backward: its module exports and their work per element, in multiply-adds of the SIMD matmul. */
export interface NormGrad {
  readonly input: "layerNormGrad" | "rmsNormGrad";
  readonly weight: "layerNormWeightGrad" | "rmsNormWeightGrad";
  readonly work: number;
}

/** The gradient to x [..., E] from grad and x, with the optional weight w [E] (input 2). */
export function normInputGrad(call: Call, ctx: WasmContext, norm: NormGrad): WasmValue | Promise<WasmValue> {
  const { g, x, eps, e, rows } = rowsOf(call);
  const w = optionalInput(call, 2, "weight");
  const out = ctx.output(call, x.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    const part = (r0: number, r1: number) =>
      ctx.exports[norm.input](
        g.address,
        ctx.desc(g, 0),
        x.address,
        ctx.desc(x, 1),
        writeAffine(ctx, ctx.params, eps, w?.address ?? 0, w?.strides[0] ?? 0, 0, 0),
        out.address,
        r0,
        r1,
      );
    return overRows(call, ctx, rows, e * norm.work, part);
  });
}

/** The gradient to the weight [E] from grad and x. */
export function normWeightGrad(call: Call, ctx: WasmContext, norm: NormGrad): WasmValue | Promise<WasmValue> {
  const { g, x, eps, e, rows } = rowsOf(call);
  const out = ctx.output(call, [e]);
  return fillingChunked(call, ctx, out, () => {
    if (e === 0) return undefined;
    if (rows === 0) {
      ctx.exports.zero(out.address, e * 4);
      return undefined;
    }
    const acc = ctx.alloc([2 * e], `${call.node} (float64 accumulators)`);
    const run = () => {
      ctx.exports.zero(acc.address, e * 8);
      const part = (r0: number, r1: number) =>
        ctx.exports[norm.weight](g.address, ctx.desc(g, 0), x.address, ctx.desc(x, 1), acc.address, eps, r0, r1);
      const finish = () => ctx.exports.f64ToF32(acc.address, out.address, e);
      const pending = overRows(call, ctx, rows, e * norm.work, part);
      if (pending === undefined) {
        finish();
        return undefined;
      }
      return pending.then(finish);
    };
    return withCleanup(run, () => ctx.release(acc));
  });
}
