// layer-norm-grad and layer-norm-weight-grad: layer norm's backward to its input and to its weight, each row's mean and
// 1/σ recomputed from x as the forward kernel computes them (float64, two-pass), in the module
// (assembly/layer-norm-grad.ts; f64x2 lanes on contiguous rows). The weight gradient sums over rows into float64
// accumulators kept in a block of their own across chunks, rounded once at the end. Any views. With a signal, a big call
// runs in chunks of rows (chunks.ts).
import { checkLayerNormEps, expectAxis, expectNormParams, expectSameShape, withCleanup } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { writeAffine } from "./layer-norm.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, optionalInput, requireInput, type Call } from "./adapter.js";

/** The row length E and row count of grad and x [..., E] (checked: same shapes, at least one axis). */
function rowsOf(call: Call, g: WasmValue, x: WasmValue): { readonly e: number; readonly rows: number } {
  expectSameShape(call, "x", g, x);
  expectAxis(call, "x", x);
  const e = x.shape[x.rank - 1]!;
  return { e, rows: e === 0 ? 0 : x.size / e };
}

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const layerNormGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const w = optionalInput(call, 2, "weight");
  const eps = checkLayerNormEps(call);
  const { e, rows } = rowsOf(call, g, x);
  expectNormParams(call, e, w, undefined);
  const out = ctx.output(call, x.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    const part = (r0: number, r1: number) =>
      ctx.exports.layerNormGrad(
        g.address,
        ctx.desc(g, 0),
        x.address,
        ctx.desc(x, 1),
        writeAffine(ctx, ctx.params, eps, w?.address ?? 0, w?.strides[0] ?? 0, 0, 0),
        out.address,
        r0,
        r1,
      );
    return overRows(call, ctx, rows, e * LAYER_NORM_GRAD_WORK, part);
  });
});

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel = chunkedKernel((call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const eps = checkLayerNormEps(call);
  const { e, rows } = rowsOf(call, g, x);
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
        ctx.exports.layerNormWeightGrad(g.address, ctx.desc(g, 0), x.address, ctx.desc(x, 1), acc.address, eps, r0, r1);
      const finish = () => ctx.exports.f64ToF32(acc.address, out.address, e);
      const pending = overRows(call, ctx, rows, e * LAYER_NORM_GRAD_WORK, part);
      if (pending === undefined) {
        finish();
        return undefined;
      }
      return pending.then(finish);
    };
    return withCleanup(run, () => ctx.release(acc));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: four float64 passes over one or two rows. */
const LAYER_NORM_GRAD_WORK = 30;
