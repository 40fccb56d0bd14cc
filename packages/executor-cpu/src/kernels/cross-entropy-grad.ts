// cross-entropy-grad: the logits' gradient of a language model's loss, (softmax(logits) − onehot(target)) times the
// loss's gradient per position. Targets are checked with the forward kernel's error before anything is written.
import { findBadIndex, type CrossEntropyAttrs } from "@attngraph/graph";
import { sizeOf, type Tensor } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { attrsOf, intInput, optionalInput, requireInput } from "./adapter.js";
import { ensure64 } from "./matmul.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

let rowScratch: Float64Array = new Float64Array(0); // one row of exponentials; reused, one Impl call is synchronous

/**
 * Per position p, with t = targets[p]: (softmax(logits[p]) − onehot(t)) · scales[p], in float64, stored as float32; a
 * position whose scale is 0 because it is ignored gets a row of +0. Softmax is stable (the row max is subtracted), so
 * logits of 1e4 do not overflow; a NaN logit makes its row NaN. Targets must already be checked (in [0, V) or ignored).
 * @param logits [..., V], any strides
 * @param scales the loss gradient of each position (already divided by the count for "mean"); NaN allowed
 * @param out where to write [..., V] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function crossEntropyGradImpl(
  logits: StridedView,
  targets: Int32Array,
  ignoreIndex: number | null,
  scales: Float64Array,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, v, [rows], [ls], [ld]] = planRows(part, logits);
  const y = out ?? new Float32Array(sizeOf(logits.shape));
  const e = (rowScratch = ensure64(rowScratch, v)); // the row's exponentials, kept in float64 until normalised
  for (let r = 0; r < rows.length; r++) {
    const o = (r0 + r) * v;
    const t = targets[r0 + r]!;
    if (t === ignoreIndex) {
      y.fill(0, o, o + v);
      continue;
    }
    const base = rows[r]!;
    let max = -Infinity;
    // `>` skips NaN: the NaN still reaches exp below and makes the sum, and so the row, NaN.
    for (let j = 0, p = base; j < v; j++, p += ls) if (ld[p]! > max) max = ld[p]!;
    let sum = 0;
    for (let j = 0, p = base; j < v; j++, p += ls) {
      const ej = Math.exp(ld[p]! - max);
      e[j] = ej;
      sum += ej;
    }
    const g = scales[r0 + r]!;
    for (let j = 0; j < v; j++) y[o + j] = (e[j]! / sum - (j === t ? 1 : 0)) * g;
  }
  return y;
}

/**
 * The loss gradient of each position: grad (absent = 1) for "sum", grad / count for "mean" (count = positions not
 * ignored), grad[p] for "none"; 0 at ignored positions. `grad` must be [] ("mean", "sum") or the targets' shape
 * (checked by the caller).
 */
function positionScales(grad: Tensor | undefined, targets: Int32Array, attrs: CrossEntropyAttrs): Float64Array {
  const { ignoreIndex, reduction } = attrs;
  const g = grad?.toFloat32Array();
  let counted = 0;
  for (const t of targets) if (t !== ignoreIndex) counted++;
  const scales = new Float64Array(targets.length);
  // "mean" over no counted position: every row is ignored, so every scale stays 0 (never 0/0).
  const shared = reduction === "none" ? 0 : (g?.[0] ?? 1) / (reduction === "mean" ? counted : 1);
  for (let p = 0; p < targets.length; p++) {
    if (targets[p] === ignoreIndex) continue;
    scales[p] = reduction === "none" ? (g?.[p] ?? 1) : shared;
  }
  return scales;
}

/**
 * Inputs: logits [..., V], targets [...] int32, optional grad ([] for mean/sum, [...] for none; absent = 1);
 * attrs { ignoreIndex, reduction } → [..., V].
 */
export const crossEntropyGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const logits = requireInput(call, 0, "logits");
  const targets = intInput(call, 1, "targets");
  const grad = optionalInput(call, 2, "grad");
  const attrs = attrsOf<CrossEntropyAttrs>(call);
  const t = targets.toInt32Array();
  const v = logits.shape[logits.rank - 1]!;
  const bad = findBadIndex(call, "targets", t, targets.shape, v, "target", attrs.ignoreIndex);
  if (bad) throw bad;
  const scales = positionScales(grad, t, attrs);
  return writeRows(call, chunkWork, logits.shape, CROSS_ENTROPY_GRAD_WORK, (y, part) =>
    crossEntropyGradImpl(logits, t, attrs.ignoreIndex, scales, y, part),
  );
});

/** Work per element in multiply-adds of the matmul core: two exps and three passes (estimated ≈ 40). */
const CROSS_ENTROPY_GRAD_WORK = 40;
