// add-layer-norm: the fused residual add and layer norm of a pre-norm block, writing [a + b | LayerNorm(a + b)] side by
// side on the last axis. Each row's sum is stored as float32 first and normalised from those float32 values, the same
// arithmetic as the add and layer-norm kernels, so both halves are bit for bit what the unfused pair gives.
import {
  addLayerNormShape,
  afterwards,
  broadcastStrides,
  checkLayerNormEps,
  expectNormParams,
  overRows,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result } from "./adapter.js";
import { rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

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
  const n = sumShape[sumShape.length - 1]!;
  const as: StridedView = {
    data: a.data,
    shape: sumShape,
    strides: broadcastStrides(a.shape, a.strides, sumShape),
    offset: a.offset,
  };
  const bs: StridedView = {
    data: b.data,
    shape: sumShape,
    strides: broadcastStrides(b.shape, b.strides, sumShape),
    offset: b.offset,
  };
  const ra = rowOffsets(as, part.start, part.end);
  const rb = rowOffsets(bs, part.start, part.end);
  const sa = as.strides[sumShape.length - 1]!;
  const sb = bs.strides[sumShape.length - 1]!;
  const wd = weight?.data;
  const ws = weight?.strides[0] ?? 0;
  const wo = weight?.offset ?? 0;
  const bd = bias?.data;
  const bss = bias?.strides[0] ?? 0;
  const bo = bias?.offset ?? 0;
  for (let r = 0; r < ra.length; r++) {
    const o = (part.start + r) * 2 * n; // the sum's half of the row; the norm's starts at o + n
    for (let j = 0, p = ra[r]!, q = rb[r]!; j < n; j++, p += sa, q += sb) y[o + j] = a.data[p]! + b.data[q]!;
    // Two passes over the float32 sums, as layer-norm does (see its kernel for why not E[x²] − E[x]²).
    let total = 0;
    for (let j = 0; j < n; j++) total += y[o + j]!;
    const mean = total / n;
    let sq = 0;
    for (let j = 0; j < n; j++) {
      const d = y[o + j]! - mean;
      sq += d * d;
    }
    const inv = 1 / Math.sqrt(sq / n + eps);
    for (let j = 0; j < n; j++) {
      const v = (y[o + j]! - mean) * inv;
      y[o + n + j] = (wd === undefined ? v : v * wd[wo + j * ws]!) + (bd === undefined ? 0 : bd[bo + j * bss]!);
    }
  }
}

/** Inputs: a, b (broadcastable to [..., E]), optional weight [E], bias [E]; attrs { eps } → [..., 2E]. */
export const addLayerNormKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const weight = optionalInput(call, 2, "weight");
  const bias = optionalInput(call, 3, "bias");
  const eps = checkLayerNormEps(call);
  const { sumShape, e } = addLayerNormShape(call, a, b);
  expectNormParams(call, e, weight, bias);
  const shape = [...sumShape.slice(0, -1), 2 * e];
  const rows = rowCount(sumShape);
  const y = outData(call, shape) ?? new Float32Array(rows * 2 * e);
  const pending = overRows(call, chunkWork, rows, e * ADD_LAYER_NORM_WORK, (start, end) =>
    addLayerNormImpl(a, b, sumShape, eps, weight, bias, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, shape));
});

/** Work per element in multiply-adds of the matmul core: the add and layer norm's three passes (estimated ≈ 11). */
const ADD_LAYER_NORM_WORK = 11;
