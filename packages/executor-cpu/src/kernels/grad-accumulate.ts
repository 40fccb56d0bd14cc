// grad-accumulate: the running sum of a parameter's microbatch gradients, nanoGPT's gradient accumulation (loss / n per
// micro step, .grad summed): scale · grad at micro step k = 1 (acc is not read: it holds the last update's sum), acc +
// scale · grad after; in float64, stored as float32 once.
import { checkOptimizerStepValue, type GradAccumulateAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * (restart ? 0 : acc) + scale · grad, row-major.
 * @param acc [...], any strides (not read with restart)
 * @param grad [...] (acc's shape), any strides
 * @param out where to write; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function gradAccumulateImpl(
  acc: StridedView,
  grad: StridedView,
  scale: number,
  restart: boolean,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [aRows, gRows], [as, gs], [ad, gd]] = planRows(part, acc, grad);
  const y = out ?? new Float32Array(sizeOf(acc.shape));
  for (let r = 0; r < aRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = aRows[r]!, q = gRows[r]!; j < n; j++, p += as, q += gs)
      y[o + j] = (restart ? 0 : ad[p]!) + scale * gd[q]!;
  }
  return y;
}

/** Inputs: acc [...], grad [...], step [] or [1] (the micro step k, 1 first); attrs { scale } → acc's shape. */
export const gradAccumulateKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const acc = requireInput(call, 0, "acc");
  const grad = requireInput(call, 1, "grad");
  const step = requireInput(call, 2, "step");
  const { scale } = attrsOf<GradAccumulateAttrs>(call);
  const k = checkOptimizerStepValue(call, step.data[step.offset] ?? NaN);
  return writeRows(call, chunkWork, acc.shape, ACCUMULATE_WORK, (y, part) =>
    gradAccumulateImpl(acc, grad, scale, k === 1, y, part),
  );
});

/** Work per element in multiply-adds of the matmul core: two strided reads, a multiply-add and a write (≈ 3). */
const ACCUMULATE_WORK = 3;
