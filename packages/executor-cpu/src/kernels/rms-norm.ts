// rms-norm: Llama's LlamaRMSNorm over the last axis, the normalisation before attention and before the MLP in a Llama
// block (and its final norm).
import type { RmsNormAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, requireInput, attrsOf } from "./adapter.js";
import { paramVector, rmsOf } from "./norm-rows.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

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
  const [r0, n, [rows], [xs], [xd]] = planRows(part, x);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  const { data: wd, stride: ws, offset: wo } = paramVector(weight);
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
  const { eps } = attrsOf<RmsNormAttrs>(call);
  return writeRows(call, chunkWork, x.shape, RMS_NORM_WORK, (y, part) => rmsNormImpl(x, eps, weight, y, part));
});

/** Work per element in multiply-adds of the matmul core: two passes over the row (estimated ≈ 5). */
const RMS_NORM_WORK = 5;
