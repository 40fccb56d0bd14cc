// The call every optimizer update (adam-moment, adam-step, sgd-momentum, sgd-step) makes into the module, written
// once: three operands x, y, z of one shape → a new [...] (assembly/optim-loops.ts runs both forms). Every operand
// that is read dense: one span of elements, chunks of elements; else x and y go row by row through their
// descriptors and a strided z is copied dense first (the module's row form reads z dense). With a signal, a big call
// runs in chunks.
import { withCleanup } from "@attngraph/graph";
import { overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { writeOptim, type OptimFields } from "./optim-params.js";
import { fillingChunked, type Call } from "./adapter.js";

/** The module's two forms of one update, by export name (looked up at each chunk: the module may be replaced). */
export interface OptimExports {
  readonly span: "adamMoment" | "adamStep" | "sgdMomentum" | "sgdStep";
  readonly rows: "adamMomentStrided" | "adamStepStrided" | "sgdMomentumStrided" | "sgdStepStrided";
}

export interface OptimOperands {
  readonly x: WasmValue;
  readonly y: WasmValue;
  /** Absent where the update reads no z (the module then reads address 0 never). */
  readonly z: WasmValue | undefined;
  /** z's input name, for the dense copy's label. */
  readonly zName: string;
  /** Whether the module reads x and y (one not read need not be dense for the span form). */
  readonly readsX: boolean;
  readonly readsY: boolean;
}

/**
 * Runs one update with `fields` (all but `extra`, which is z's address in the row form) at `work` multiply-adds an
 * element; answers the output [...] (x's shape), or a Promise of it when chunked.
 */
export function runOptimUpdate(
  call: Call,
  ctx: WasmContext,
  { span, rows }: OptimExports,
  { x, y, z, zName, readsX, readsY }: OptimOperands,
  fields: OptimFields,
  work: number,
): WasmValue | Promise<WasmValue> {
  const out = ctx.output(call, x.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    let temp: WasmValue | undefined;
    const run = () => {
      if (z && !z.dense) temp = ctx.dense(z, `${call.node} (dense copy of a strided ${zName})`).value;
      const zd = temp ?? z;
      if ((!readsX || x.dense) && (!readsY || y.dense)) {
        // Chunks of elements: any range of a span is itself a span.
        const part = (e0: number, e1: number) =>
          ctx.exports[span](
            x.address + e0 * 4,
            y.address + e0 * 4,
            zd ? zd.address + e0 * 4 : 0,
            out.address + e0 * 4,
            e1 - e0,
            writeOptim(ctx, ctx.params, fields),
          );
        return overRows(call, ctx, x.size, work, part);
      }
      const n = x.shape[x.rank - 1]!;
      // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
      const part = (r0: number, r1: number) =>
        ctx.exports[rows](
          x.address,
          ctx.desc(x, 0),
          y.address,
          ctx.desc(y, 1),
          out.address,
          writeOptim(ctx, ctx.params, { ...fields, extra: zd?.address ?? 0 }),
          r0,
          r1,
        );
      return overRows(call, ctx, x.size / n, n * work, part);
    };
    return withCleanup(run, () => temp && ctx.release(temp));
  });
}
