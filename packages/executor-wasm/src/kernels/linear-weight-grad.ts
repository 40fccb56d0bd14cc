// linear-weight-grad: the weight gradient of a projection, dW [Out, In] = gradᵀ · x over every leading position (rows
// r of both, flattened), on the module's register-tiled SIMD matmul (matmul.ts: C = A · B with A read by rows with unit
// column stride, B any strides). A = gradᵀ [Out, R]: grad read in place when its rows are one element apart (a
// transposed view), else transposed once into a dense temporary by the module (assembly/transpose.ts). B = x [R, In]:
// read in place when its leading axes collapse into one row stride (any column stride), else a dense copy. With a
// signal, a big call runs in chunks of output rows; then x is packed into the matmul's panels once for all chunks.
import { withCleanup } from "@attngraph/graph";
import { chunkSignal, chunkedKernel, overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, product, requireInput } from "./adapter.js";
import { leadingStride, matmul, type Operand } from "./matmul.js";

/** Inputs: grad [..., Out], x [..., In] (the same leading axes) → [Out, In]. */
export const linearWeightGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const nOut = g.shape[g.rank - 1]!;
  const nIn = x.shape[x.rank - 1]!;
  const rows = product(g.shape.slice(0, -1));
  const out = ctx.output(call, [nOut, nIn]);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    if (rows === 0) {
      ctx.exports.zero(out.address, out.size * 4);
      return undefined;
    }
    const temps: WasmValue[] = [];
    const run = () => {
      const a = gradTransposed(ctx, g, nOut, rows, temps, call.node);
      const b = rowsOf(ctx, x, nIn, temps, call.node);
      // Chunked: x packed into the matmul's panels once, not once per chunk.
      let packed: number | undefined;
      if (chunkSignal(call, ctx, nOut * rows * nIn) !== undefined) {
        const panels = ctx.alloc([ctx.exports.packedBFloats(nIn, rows)], `${call.node} (x packed for the matmul)`);
        temps.push(panels);
        ctx.exports.packMatmulB(b.address, b.rowStride, b.colStride, rows, nIn, panels.address);
        packed = panels.address;
      }
      // Output rows are independent: a chunk is the same matmul over rows [o0, o1) of gradᵀ.
      const part = (o0: number, o1: number) => {
        const ar = { address: a.address + o0 * a.rowStride * 4, rowStride: a.rowStride, colStride: 1 };
        matmul(ctx, o1 - o0, nIn, rows, ar, b, out.address + o0 * nIn * 4, nIn, undefined, call.node, packed);
      };
      return overRows(call, ctx, nOut, rows * nIn, part);
    };
    return withCleanup(run, () => temps.forEach((t) => ctx.release(t)));
  });
});

/** gradᵀ [Out, R] with unit column stride: grad itself when its rows are one element apart, else a transposed copy. */
function gradTransposed(
  ctx: WasmContext,
  g: WasmValue,
  nOut: number,
  rows: number,
  temps: WasmValue[],
  node: string,
): Operand {
  const colStride = g.strides[g.rank - 1]!;
  if (rows === 1 || leadingStride(g) === 1) return { address: g.address, rowStride: colStride, colStride: 1 };
  const t = ctx.alloc([nOut, rows], `${node} (gradient transposed for the matmul)`);
  temps.push(t);
  ctx.exports.transposeRows(g.address, ctx.desc(g), t.address, rows, 0, rows);
  return { address: t.address, rowStride: rows, colStride: 1 };
}

/** x as the matmul's B operand [R, In]: in place when its leading axes collapse into one row stride, else a dense copy. */
function rowsOf(ctx: WasmContext, x: WasmValue, nIn: number, temps: WasmValue[], node: string): Operand {
  const rs = leadingStride(x);
  if (rs !== undefined) return { address: x.address, rowStride: rs, colStride: x.strides[x.rank - 1]! };
  const { value } = ctx.dense(x, `${node} (dense copy of a strided x)`);
  temps.push(value);
  return { address: value.address, rowStride: nIn, colStride: 1 };
}
