// cross-entropy: the loss of a language model's logits against int32 targets (PyTorch F.cross_entropy).
import { findBadIndex, type CrossEntropyAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { intInput, outData, requireInput, result, attrsOf } from "./adapter.js";
import { lastAxis, rowOffsets, type StridedView } from "./strided.js";

/**
 * Per position logsumexp(logits) − logits[target], in float64: the row max is subtracted before exp, so logits of 1e4
 * neither overflow nor lose the small differences between them. A position whose target is `ignoreIndex` gets 0 and is
 * not counted. Targets must already be checked to lie in [0, V) (or be ignoreIndex).
 * @param logits [..., V], any strides
 * @returns the loss per position (row-major over the leading axes) and how many positions were counted
 */
export function crossEntropyRows(
  logits: StridedView,
  targets: Int32Array,
  ignoreIndex: number | null,
): { losses: Float64Array; counted: number } {
  const rows = rowOffsets(logits);
  const { length: v, stride: ls } = lastAxis(logits);
  const ld = logits.data;
  const losses = new Float64Array(rows.length);
  let counted = 0;
  for (let r = 0; r < rows.length; r++) {
    const t = targets[r]!;
    if (t === ignoreIndex) continue;
    const base = rows[r]!;
    let max = -Infinity;
    // `>` skips NaN: the NaN still reaches exp below and makes this position's loss NaN, as in PyTorch.
    for (let j = 0, p = base; j < v; j++, p += ls) if (ld[p]! > max) max = ld[p]!;
    // Every logit −∞ (or max +∞): exp(x − max) is NaN; PyTorch gives NaN/∞ there too, so let IEEE math say so.
    let sum = 0;
    for (let j = 0, p = base; j < v; j++, p += ls) sum += Math.exp(ld[p]! - max);
    losses[r] = Math.log(sum) + max - ld[base + t * ls]!;
    counted++;
  }
  return { losses, counted };
}

/** Inputs: logits [..., V], targets [...] int32; attrs { ignoreIndex, reduction } → [] (mean, sum) or [...] (none). */
export const crossEntropyKernel: CpuKernel = (call) => {
  const logits = requireInput(call, 0, "logits");
  const targets = intInput(call, 1, "targets");
  const { ignoreIndex, reduction } = attrsOf<CrossEntropyAttrs>(call);
  const t = targets.toInt32Array();
  const bad = findBadIndex(call, "targets", t, targets.shape, logits.shape[logits.rank - 1]!, "target", ignoreIndex);
  if (bad) throw bad;
  const { losses, counted } = crossEntropyRows(logits, t, ignoreIndex);
  const shape = reduction === "none" ? [...targets.shape] : [];
  const y = outData(call, shape) ?? new Float32Array(reduction === "none" ? losses.length : 1);
  if (reduction === "none") y.set(losses);
  else {
    let total = 0;
    for (const l of losses) total += l;
    // A mean over no counted position is 0, not 0/0: every target ignored means nothing to learn from (see the op doc).
    y[0] = reduction === "sum" ? total : counted === 0 ? 0 : total / counted;
  }
  return result(call, y, shape);
};
