// clip-by-norm: one gradient scaled as torch.nn.utils.clip_grad_norm_ scales every one, x · min(1, maxNorm /
// (sqrt(total) + eps)), total the sum of squares of all the gradients (sum-squares). The coefficient is taken in
// float64, each product rounded once to float32.
import type { ClipByNormAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/** clip_grad_norm_'s `clip_coef_clamped`: min(1, maxNorm / (sqrt(total) + eps)); NaN stays NaN (torch's clamp). */
export function clipCoefficient(total: number, a: ClipByNormAttrs): number {
  const coef = a.maxNorm / (Math.sqrt(total) + a.eps);
  return coef > 1 ? 1 : coef;
}

/**
 * x · coef, written row-major.
 * @param x [...], any strides
 * @param out where to write; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function scaleImpl(x: StridedView, coef: number, out?: Float32Array, part?: RowRange): Float32Array {
  const [r0, n, [rows], [stride], [d]] = planRows(part, x);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  for (let r = 0; r < rows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = rows[r]!; j < n; j++, p += stride) y[o + j] = d[p]! * coef;
  }
  return y;
}

/** Inputs: x [...], sumSquares [] or [1]; attrs { maxNorm, eps } → x's shape. */
export const clipByNormKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const total = requireInput(call, 1, "sumSquares");
  const a = attrsOf<ClipByNormAttrs>(call);
  const coef = clipCoefficient(total.data[total.offset]!, a);
  return writeRows(call, chunkWork, x.shape, CLIP_WORK, (y, part) => scaleImpl(x, coef, y, part));
});

/** Work per element in multiply-adds of the matmul core: a strided read, a multiply and a write (≈ 3). */
const CLIP_WORK = 3;
