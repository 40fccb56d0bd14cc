// add-layer-norm: the fused residual add and layer norm of a pre-norm block, [a + b | LayerNorm(a + b)] side by side on
// the last axis ([..., 2E]: row r holds its E sums, then their E normalised values). The host lays a and b over the
// sums' shape as the add kernel does (broadcastStrides, leading axes merged where both allow), keeping the normalised
// axis as the module's row; the module (assembly/add-layer-norm.ts) then writes each row's float32 sums with the add's
// code and normalises them with the layer norm's (two-pass float64) while the row is in L1. Both halves are the
// unfused pair's bits, with no sum value of its own and one pass less over memory. With a signal, a big call runs in
// chunks of rows.
import { broadcastStrides, type AddLayerNormAttrs } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, fillingChunked, optionalInput, requireInput } from "./adapter.js";
import { ADD_WORK, PAIR_FIELDS, addBlocks, mergeAxes } from "./add.js";
import { writeIntFields } from "./params-block.js";
import { LAYER_NORM_WORK } from "./layer-norm.js";

/** Inputs: a, b (broadcastable to [..., E]), optional weight [E], optional bias [E]; attrs { eps } → [..., 2E]. */
export const addLayerNormKernel = chunkedKernel((call, ctx) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const w = optionalInput(call, 2, "weight");
  const bias = optionalInput(call, 3, "bias");
  const { eps } = attrsOf<AddLayerNormAttrs>(call);
  // outShape is [..., 2E] by the shape rule: the sums' shape is it with half its last dim.
  const k = call.outShape.length - 1;
  const e = call.outShape[k]! / 2;
  const sumShape = [...call.outShape.slice(0, k), e];
  const out = ctx.output(call, call.outShape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    // The leading axes merge where a and b allow (the output's rows are uniformly 2E apart over all of them); the last
    // stays the module's row, so that every row of sums is normalised as a whole.
    const sa = broadcastStrides(a.shape, a.strides, sumShape);
    const sb = broadcastStrides(b.shape, b.strides, sumShape);
    const axes = [...mergeAxes(sumShape.slice(0, k), sa.slice(0, k), sb.slice(0, k)), { n: e, sa: sa[k]!, sb: sb[k]! }];
    const [wp, ws, bp, bs] = [w?.address ?? 0, w?.strides[0] ?? 0, bias?.address ?? 0, bias?.strides[0] ?? 0];
    const part = addBlocks(a, b, axes, (pa, ars, acs, pb, brs, bcs, r, rows) => {
      const dst = out.address + r * 2 * e * 4; // the row's [sum | norm]
      const pair = writeIntFields(ctx, ctx.params, PAIR_FIELDS, [pa, ars, acs, pb, brs, bcs, dst, rows, e]);
      ctx.exports.addLayerNorm(pair, wp, ws, bp, bs, eps);
    });
    return overRows(call, ctx, out.size / (2 * e), e * (ADD_WORK + LAYER_NORM_WORK), part);
  });
});
