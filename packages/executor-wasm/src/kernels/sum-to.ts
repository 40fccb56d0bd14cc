// sum-to: x summed down to a shape it broadcasts from (the reverse of broadcasting: a bias gradient [B, T, E] → [E],
// GQA's head groups [B, Hkv, g, S, D] → [B, Hkv, 1, S, D]), in float64 in the module (assembly/sum-to.ts). The host
// describes x as two views over its memory, the KEPT axes (the output's, x's strides: row-major like the output) and
// the REDUCED ones (x's leading axes and those where the output has 1), and picks the loop order that reads x the more
// contiguously: reduced outer / kept inner when the output's last axis walks x with the smaller stride, else the other
// way round. outShape equal to x's shape is a copy; an empty reduction gives zeros. With a signal, a big call runs in
// chunks of output rows (chunks.ts).
import { checkSumToShape } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { WasmValue } from "../value.js";
import { fillingChunked, requireInput } from "./adapter.js";

/** Input: x [...]; attrs { shape } (concrete at dispatch: `call.outShape`) → outShape. */
export const sumToKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  // The shape rule leaves a named dim of the attribute unchecked: outShape, where the runtime bound it, is checked here.
  const shape = checkSumToShape(call, x);
  const lead = x.rank - shape.length;
  const out = ctx.output(call, shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    // Kept axes: the output's, reading x with its strides (0 on an axis of 1, whose index is always 0).
    const kept = new WasmValue(
      x.block,
      shape,
      shape.map((d, i) => (d === 1 ? 0 : x.strides[lead + i]!)),
      x.offset,
    );
    // Reduced axes: x's leading ones and those where the output has 1, in x's order.
    const axes = x.shape.map((_d, i) => i).filter((i) => x.shape[i] !== 1 && (i < lead || shape[i - lead] === 1));
    const reduced = new WasmValue(
      x.block,
      axes.map((i) => x.shape[i]!),
      axes.map((i) => x.strides[i]!),
      x.offset,
    );
    const count = reduced.size;
    if (count === 0) {
      ctx.exports.zero(out.address, out.size * 4);
      return undefined;
    }
    if (count === 1) {
      ctx.copy(kept, out);
      return undefined;
    }
    const n = shape.length === 0 ? 1 : shape[shape.length - 1]!;
    const keptStride = n > 1 ? Math.abs(kept.strides[shape.length - 1]!) : Infinity;
    const reducedStride = Math.abs(reduced.strides[reduced.rank - 1]!);
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    if (reducedStride < keptStride) {
      const part = (e0: number, e1: number) =>
        ctx.exports.sumToInner(x.address, ctx.desc(kept, 0), ctx.desc(reduced, 1), out.address, e0, e1);
      return overRows(call, ctx, out.size, count * SUM_TO_WORK, part);
    }
    const part = (r0: number, r1: number) =>
      ctx.exports.sumTo(x.address, ctx.desc(kept, 0), ctx.desc(reduced, 1), out.address, r0, r1);
    return overRows(call, ctx, out.size / n, n * count * SUM_TO_WORK, part);
  });
});

/** Work per element of x in multiply-adds of the SIMD matmul: a load and a float64 add. */
const SUM_TO_WORK = 3;
