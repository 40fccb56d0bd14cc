// rms-norm: Llama's LlamaRMSNorm over the last axis, the normalisation before attention and before the MLP in a Llama
// block (and its final norm).
import { afterwards, checkLayerNormEps, expectRmsWeight, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { expectRank, optionalInput, outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/** 1/sqrt(mean(x²) + eps) of one row, summed in float64 (LlamaRMSNorm upcasts to float32; wider is at least as good). */
export function rmsOf(data: Float32Array, base: number, n: number, stride: number, eps: number): number {
  let sq = 0;
  for (let j = 0, p = base; j < n; j++, p += stride) sq += data[p]! * data[p]!;
  return 1 / Math.sqrt(sq / n + eps);
}

/**
 * x · r · weight per row, r = 1/sqrt(mean(x²) + eps), in float64 stored as float32. No mean is subtracted, so there is
 * nothing to cancel and one pass gives r; a zero row gives zeros. Each row is read whole before it is written, so `out`
 * may be x's own memory.
 * @param x [..., E], any strides
 * @param weight [E] or undefined (1), any stride
 * @param out where to write [..., E] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function rmsNormImpl(
  x: StridedView,
  eps: number,
  weight: StridedView | undefined,
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
  for (let r = 0; r < rows.length; r++) {
    const inv = rmsOf(xd, rows[r]!, n, xs, eps);
    const o = (r0 + r) * n;
    for (let j = 0, p = rows[r]!; j < n; j++, p += xs)
      y[o + j] = wd === undefined ? xd[p]! * inv : xd[p]! * inv * wd[wo + j * ws]!;
  }
  return y;
}

/** Inputs: x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const weight = optionalInput(call, 1, "weight");
  const eps = checkLayerNormEps(call);
  if (x.rank < 1) expectRank(call, "x", x, 1, "[..., E]");
  const { length: n } = lastAxis(x);
  expectRmsWeight(call, n, weight);
  const rows = rowCount(x.shape);
  const y = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * RMS_NORM_WORK, (start, end) =>
    rmsNormImpl(x, eps, weight, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, x.shape));
});

/** Work per element in multiply-adds of the matmul core: two passes over the row (estimated ≈ 5). */
const RMS_NORM_WORK = 5;
