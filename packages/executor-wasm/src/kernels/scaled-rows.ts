// The call softmax-grad and mask-grad make into the module, written once: both ops take two inputs of one shape (by
// their shape rules) and a `scale`, and the module's softmaxGrad and maskGrad (assembly/softmax-grad.ts) take the same
// arguments: both inputs row by row through their descriptors into a new value of that shape. With a signal, a big
// call runs in chunks of rows (chunks.ts).
import type { MaskGradAttrs, SoftmaxGradAttrs } from "@attngraph/graph";
import { overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { attrsOf, fillingChunked, requireInput, type Call } from "./adapter.js";

/** One op's module export, its two input names in slot order, and its work per element in multiply-adds. */
export interface ScaledRows {
  readonly entry: "softmaxGrad" | "maskGrad";
  readonly inputs: readonly [string, string];
  readonly work: number;
}

/** Runs `op` over the call's inputs with its `scale`; the output has the inputs' shape. */
export function scaledRows(call: Call, ctx: WasmContext, op: ScaledRows): WasmValue | Promise<WasmValue> {
  const a = requireInput(call, 0, op.inputs[0]);
  const b = requireInput(call, 1, op.inputs[1]);
  const { scale } = attrsOf<SoftmaxGradAttrs | MaskGradAttrs>(call);
  const n = a.rank === 0 ? 1 : a.shape[a.rank - 1]!;
  const rows = n === 0 ? 0 : a.size / n;
  const out = ctx.output(call, a.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    const part = (r0: number, r1: number) =>
      ctx.exports[op.entry](a.address, ctx.desc(a, 0), b.address, ctx.desc(b, 1), out.address, scale, r0, r1);
    return overRows(call, ctx, rows, n * op.work, part);
  });
}
