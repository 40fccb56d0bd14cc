// layer-norm: nn.LayerNorm over the last axis, the normalisation before attention and before the MLP in a pre-norm
// transformer block.
import type { LayerNormAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, requireInput, attrsOf } from "./adapter.js";
import { layerNormRow, paramVector, rowStats } from "./norm-rows.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * (x − mean) / sqrt(var + eps) · weight + bias per row, in float64, stored as float32. Two passes over each row (the
 * mean, then the squared deviations from it) instead of E[x²] − E[x]²: that difference cancels catastrophically for a
 * row far from 0 (1e4 + small noise in float32), and a constant row would give a tiny negative variance. A constant row
 * has deviations of exactly 0, so it gives exactly `bias` (0 without one). Each row is read whole before it is written,
 * so `out` may be x's own memory.
 * @param x [..., E], any strides
 * @param weight [E] or undefined (1), any stride
 * @param bias [E] or undefined (0), any stride
 * @param out where to write [..., E] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function layerNormImpl(
  x: StridedView,
  eps: number,
  weight: StridedView | undefined,
  bias: StridedView | undefined,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [rows], [xs], [xd]] = planRows(part, x);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  const w = paramVector(weight);
  const b = paramVector(bias);
  for (let r = 0; r < rows.length; r++) {
    const { mean, rstd } = rowStats(xd, rows[r]!, n, xs, eps);
    layerNormRow(xd, rows[r]!, xs, n, mean, rstd, w, b, y, (r0 + r) * n);
  }
  return y;
}

/** Inputs: x [..., E], optional weight [E] and bias [E]; attrs { eps } → [..., E]. */
export const layerNormKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const weight = optionalInput(call, 1, "weight");
  const bias = optionalInput(call, 2, "bias");
  const { eps } = attrsOf<LayerNormAttrs>(call);
  return writeRows(call, chunkWork, x.shape, LAYER_NORM_WORK, (y, part) =>
    layerNormImpl(x, eps, weight, bias, y, part),
  );
});

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 8 on Node 20). */
const LAYER_NORM_WORK = 8;
