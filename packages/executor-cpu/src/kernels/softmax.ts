// softmax: softmax(scale · x) over the last axis, the step that turns masked scores into attention weights.
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import type { SoftmaxAttrs } from "@attngraph/graph";
import { requireInput, attrsOf } from "./adapter.js";
import { ensure64 } from "./matmul.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

let rowScratch: Float64Array = new Float64Array(0); // one row of exponentials; reused, one softmaxImpl call is synchronous

/**
 * softmax(scale · x) over the last axis, in float64, stored as float32.
 * - Stable: the row max of the scaled unmasked entries is subtracted before exp, so scores of 1000 do not overflow.
 * - An entry equal to −∞ is masked: its weight is exactly 0 whatever the scale (0 · −∞ would be NaN).
 * - A row with every entry −∞ (every key masked) gives all zeros, never NaN.
 * - NaN propagates: a NaN anywhere in a row makes that whole row NaN, as in PyTorch; so does +∞ (∞ − ∞).
 * @param x [..., S], any strides
 * @param out where to write [..., S] row-major; default: a new array
 * @param part the rows (leading axes flattened) to write; default: all
 * @returns [..., S], row-major (`out` when given)
 */
export function softmaxImpl(x: StridedView, scale: number, out?: Float32Array, part?: RowRange): Float32Array {
  const [r0, n, [rows], [xs], [xd]] = planRows(part, x);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  const e = (rowScratch = ensure64(rowScratch, n)); // the row's exponentials, kept in float64 until normalised
  for (let r = 0; r < rows.length; r++) {
    const base = rows[r]!;
    let max = -Infinity;
    for (let j = 0, p = base; j < n; j++, p += xs) {
      const v = xd[p]!;
      // `>` skips NaN here on purpose: the NaN still reaches exp below and poisons the sum, so the row becomes NaN.
      if (v !== -Infinity && scale * v > max) max = scale * v;
    }
    let sum = 0;
    for (let j = 0, p = base; j < n; j++, p += xs) {
      const v = xd[p]!;
      const ej = v === -Infinity ? 0 : Math.exp(scale * v - max);
      e[j] = ej;
      sum += ej;
    }
    // sum is 0 only when every entry is masked: write zeros. A NaN sum is not 0, so NaN flows through 1 / sum.
    const inv = sum === 0 ? 0 : 1 / sum;
    const o = (r0 + r) * n;
    for (let j = 0; j < n; j++) y[o + j] = e[j]! * inv;
  }
  return y;
}

/** Input: x [..., S] (scores [B, H, L, S] in attention); attrs { scale } → same shape. */
export const softmaxKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const { scale } = attrsOf<SoftmaxAttrs>(call);
  // In place (out = x's memory) each row is read before it is written, chunk or not.
  return writeRows(call, chunkWork, x.shape, SOFTMAX_WORK, (y, part) => softmaxImpl(x, scale, y, part));
});

/** Work per element in multiply-adds of the matmul core: two passes and an exp (measured ≈ 50 on Node 20). */
const SOFTMAX_WORK = 50;
