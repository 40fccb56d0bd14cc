// mul: a · b with NumPy broadcasting, any strides on both: add's layout (mergeAxes, addBlocks) with the module's mul
// (assembly/mul.ts) in place of its add. With a signal, a big call runs in chunks of rows.
import { addShape, broadcastStrides } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { fillingChunked, requireInput } from "./adapter.js";
import { ADD_WORK, addBlocks, mergeAxes, writePair } from "./add.js";

/** Inputs: a [...], b [...] broadcastable with a → the broadcast shape (which must be `call.outShape`). */
export const mulKernel = chunkedKernel((call, ctx) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const shape = addShape(call, a, b);
  const out = ctx.output(call, shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    const axes = mergeAxes(
      shape,
      broadcastStrides(a.shape, a.strides, shape),
      broadcastStrides(b.shape, b.strides, shape),
    );
    const n = axes.at(-1)?.n ?? 1;
    const part = addBlocks(a, b, axes, (pa, ars, acs, pb, brs, bcs, r, rows) =>
      ctx.exports.mul(writePair(ctx, ctx.params, pa, ars, acs, pb, brs, bcs, out.address + r * n * 4, rows, n)),
    );
    return overRows(call, ctx, out.size / n, n * ADD_WORK, part);
  });
});
