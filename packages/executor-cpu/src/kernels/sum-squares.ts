// sum-squares: acc + Σ x², one gradient's squared L2 norm added to the running total of global gradient-norm clipping
// (torch.nn.utils.clip_grad_norm_). Accumulated in float64 and stored as float32 once, so the total of a large model
// does not drift with the order of its elements.
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result } from "./adapter.js";
import { planRows } from "./row-plan.js";
import { lastAxis, rowCount, type RowRange, type StridedView } from "./strided.js";

/**
 * Σ x² over the rows `part` (default: all) of x, in float64.
 * @param x [...], any strides
 */
export function sumSquaresImpl(x: StridedView, part?: RowRange): number {
  const [, n, [rows], [stride], [d]] = planRows(part, x);
  let sum = 0;
  for (let r = 0; r < rows.length; r++) {
    for (let j = 0, p = rows[r]!; j < n; j++, p += stride) sum += d[p]! * d[p]!;
  }
  return sum;
}

/** Inputs: x [...], acc [] or [1] (optional, the total so far) → [1]. */
export const sumSquaresKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const acc = optionalInput(call, 1, "acc");
  const { length: n } = lastAxis(x);
  // Chunks run in row order, one after another: the float64 sum is the same as in one call.
  let sum = acc ? acc.data[acc.offset]! : 0;
  const pending = overRows(call, chunkWork, n === 0 ? 0 : rowCount(x.shape), n * SUM_SQUARES_WORK, (start, end) => {
    sum += sumSquaresImpl(x, { start, end });
  });
  return afterwards(pending, () => {
    const y = outData(call, [1]) ?? new Float32Array(1);
    y[0] = sum;
    return result(call, y, [1]);
  });
});

/** Work per element in multiply-adds of the matmul core: one strided read and a multiply-add (≈ 2). */
const SUM_SQUARES_WORK = 2;
