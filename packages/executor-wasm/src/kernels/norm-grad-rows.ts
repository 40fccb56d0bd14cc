// The module calls layer norm's and RMS norm's backward kernels make (layer-norm-grad.ts, rms-norm-grad.ts), written
// once: the two norms differ only in the module's export and its work per element. The input gradient goes row by
// row into a new [..., E]; the weight gradient sums over rows into float64 accumulators kept in a block of their own
// across chunks and rounded once at the end. With a signal, a big call runs in chunks of rows (chunks.ts).
import { expectAxis, expectSameShape, withCleanup } from "@attngraph/graph";
import { overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { writeAffine } from "./layer-norm.js";
import { fillingChunked, type Call } from "./adapter.js";

/** The row length E and row count of grad and x [..., E] (checked: same shapes, at least one axis). */
export function rowsOf(call: Call, g: WasmValue, x: WasmValue): { readonly e: number; readonly rows: number } {
  expectSameShape(call, "x", g, x);
  expectAxis(call, "x", x);
  const e = x.shape[x.rank - 1]!;
  return { e, rows: e === 0 ? 0 : x.size / e };
}

/** One norm's backward: its module exports and their work per element, in multiply-adds of the SIMD matmul. */
export interface NormGrad {
  readonly input: "layerNormGrad" | "rmsNormGrad";
  readonly weight: "layerNormWeightGrad" | "rmsNormWeightGrad";
  readonly work: number;
}

/** The gradient to x [..., E] from grad and x (E and rows from rowsOf), with the optional weight w [E]. */
export function normInputGrad(
  call: Call,
  ctx: WasmContext,
  norm: NormGrad,
  { g, x, w }: { readonly g: WasmValue; readonly x: WasmValue; readonly w: WasmValue | undefined },
  eps: number,
  { e, rows }: { readonly e: number; readonly rows: number },
): WasmValue | Promise<WasmValue> {
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

/** The gradient to the weight [E] from grad and x (E and rows from rowsOf). */
export function normWeightGrad(
  call: Call,
  ctx: WasmContext,
  norm: NormGrad,
  { g, x }: { readonly g: WasmValue; readonly x: WasmValue },
  eps: number,
  { e, rows }: { readonly e: number; readonly rows: number },
): WasmValue | Promise<WasmValue> {
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
