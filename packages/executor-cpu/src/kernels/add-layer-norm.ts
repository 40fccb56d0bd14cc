// add-layer-norm: the fused residual add and layer norm of a pre-norm block, writing [a + b | LayerNorm(a + b)] side by
// side on the last axis. Each row's sum is stored as float32 first and normalised from those float32 values, the same
// arithmetic as the add and layer-norm kernels, so both halves are bit for bit what the unfused pair gives.
import { afterwards, overRows, type AddLayerNormAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result, attrsOf } from "./adapter.js";
import { broadcastView } from "./broadcast-view.js";
import { layerNormRow, paramVector, rowStats } from "./norm-rows.js";
import { planRows } from "./row-plan.js";
import { rowCount, type RowRange, type StridedView } from "./strided.js";

/**
 * Rows `part` of [a + b | LayerNorm(a + b)] into y ([rows, 2E] row-major).
 * @param a, b any strides, broadcastable to `sumShape` [..., E]
 */
export function addLayerNormImpl(
  a: StridedView,
  b: StridedView,
  sumShape: readonly number[],
  eps: number,
  weight: StridedView | undefined,
  bias: StridedView | undefined,
  y: Float32Array,
  part: RowRange,
): void {
  const [r0, n, [ra, rb], [sa, sb], [ad, bd]] = planRows(part, broadcastView(a, sumShape), broadcastView(b, sumShape));
  const w = paramVector(weight);
  const bv = paramVector(bias);
  for (let r = 0; r < ra.length; r++) {
    const o = (r0 + r) * 2 * n; // the sum's half of the row; the norm's starts at o + n
    for (let j = 0, p = ra[r]!, q = rb[r]!; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! + bd[q]!;
    // Layer norm of the float32 sums, as the layer-norm kernel computes it on them.
    const { mean, rstd } = rowStats(y, o, n, 1, eps);
    layerNormRow(y, o, 1, n, mean, rstd, w, bv, y, o + n);
  }
}

/** Inputs: a, b (broadcastable to [..., E]), optional weight [E], bias [E]; attrs { eps } → [..., 2E]. */
export const addLayerNormKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const weight = optionalInput(call, 2, "weight");
  const bias = optionalInput(call, 3, "bias");
  const { eps } = attrsOf<AddLayerNormAttrs>(call);
  // outShape is [..., 2E], the rule's from a and b broadcast to the sums' shape [..., E].
  const shape = call.outShape;
  const e = shape[shape.length - 1]! / 2;
  const sumShape = [...shape.slice(0, -1), e];
  const rows = rowCount(sumShape);
  const y = outData(call, shape) ?? new Float32Array(rows * 2 * e);
  const pending = overRows(call, chunkWork, rows, e * ADD_LAYER_NORM_WORK, (start, end) =>
    addLayerNormImpl(a, b, sumShape, eps, weight, bias, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, shape));
});

/** Work per element in multiply-adds of the matmul core: the add and layer norm's three passes (estimated ≈ 11). */
const ADD_LAYER_NORM_WORK = 11;
