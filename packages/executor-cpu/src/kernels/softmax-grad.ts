// softmax-grad: the input gradient of softmax(scale · x), from the forward output y alone (nothing recomputed), the
// step that carries the attention weights' gradient back to the scores.
import type { SoftmaxGradAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * dx = scale · y ⊙ (grad − Σ_row grad ⊙ y) per row (a row = the last axis), the sum in float64, stored as float32.
 * - A row with y all 0 (every key masked; the forward softmax wrote zeros) gives exactly +0, never NaN, whatever its
 *   gradient holds: nothing reached the forward output from that row, so nothing flows back.
 * - Otherwise NaN propagates: a NaN in y or grad makes the row's sum NaN, and so the whole row, as in PyTorch.
 * Each row is read whole before it is written.
 * @param y [..., S], any strides
 * @param grad [..., S], any strides
 * @param out where to write [..., S] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function softmaxGradImpl(
  y: StridedView,
  grad: StridedView,
  scale: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [yRows, gRows], [ys, gs], [yd, gd]] = planRows(part, y, grad);
  const dx = out ?? new Float32Array(sizeOf(y.shape));
  for (let r = 0; r < yRows.length; r++) {
    let dot = 0;
    let masked = true;
    for (let j = 0, p = yRows[r]!, q = gRows[r]!; j < n; j++, p += ys, q += gs) {
      const v = yd[p]!;
      if (v !== 0) masked = false;
      dot += gd[q]! * v;
    }
    const o = (r0 + r) * n;
    if (masked) {
      dx.fill(0, o, o + n);
      continue;
    }
    for (let j = 0, p = yRows[r]!, q = gRows[r]!; j < n; j++, p += ys, q += gs)
      dx[o + j] = scale * yd[p]! * (gd[q]! - dot);
  }
  return dx;
}

/** Inputs: y [..., S] (the softmax's output), grad [..., S]; attrs { scale } → [..., S]. */
export const softmaxGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const y = requireInput(call, 0, "y");
  const grad = requireInput(call, 1, "grad");
  const { scale } = attrsOf<SoftmaxGradAttrs>(call);
  return writeRows(call, chunkWork, y.shape, SOFTMAX_GRAD_WORK, (dx, part) =>
    softmaxGradImpl(y, grad, scale, dx, part),
  );
});

/** Work per element in multiply-adds of the matmul core: two strided passes over two inputs (estimated ≈ 4). */
const SOFTMAX_GRAD_WORK = 4;
