// layer-norm: nn.LayerNorm over the last axis, the normalisation before attention and before the MLP in a pre-norm
// transformer block.
import { afterwards, checkLayerNormEps, expectNormParams, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { expectRank, optionalInput, outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

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
  const r0 = part?.start ?? 0;
  const rows = rowOffsets(x, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const xd = x.data;
  const y = out ?? new Float32Array(rowCount(x.shape) * n);
  const wd = weight?.data;
  const ws = weight?.strides[0] ?? 0;
  const wo = weight?.offset ?? 0;
  const bd = bias?.data;
  const bs = bias?.strides[0] ?? 0;
  const bo = bias?.offset ?? 0;
  for (let r = 0; r < rows.length; r++) {
    const base = rows[r]!;
    let sum = 0;
    for (let j = 0, p = base; j < n; j++, p += xs) sum += xd[p]!;
    const mean = sum / n;
    let sq = 0;
    for (let j = 0, p = base; j < n; j++, p += xs) {
      const d = xd[p]! - mean;
      sq += d * d;
    }
    const inv = 1 / Math.sqrt(sq / n + eps);
    const o = (r0 + r) * n;
    for (let j = 0, p = base; j < n; j++, p += xs) {
      const v = (xd[p]! - mean) * inv;
      y[o + j] = (wd === undefined ? v : v * wd[wo + j * ws]!) + (bd === undefined ? 0 : bd[bo + j * bs]!);
    }
  }
  return y;
}

/** Inputs: x [..., E], optional weight [E] and bias [E]; attrs { eps } → [..., E]. */
export const layerNormKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const weight = optionalInput(call, 1, "weight");
  const bias = optionalInput(call, 2, "bias");
  const eps = checkLayerNormEps(call);
  if (x.rank < 1) expectRank(call, "x", x, 1, "[..., E]");
  const { length: n } = lastAxis(x);
  expectNormParams(call, n, weight, bias);
  const rows = rowCount(x.shape);
  const y = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * LAYER_NORM_WORK, (start, end) =>
    layerNormImpl(x, eps, weight, bias, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, x.shape));
});

/** Work per element in multiply-adds of the matmul core: three passes over the row (estimated ≈ 8 on Node 20). */
const LAYER_NORM_WORK = 8;
