// grad-accumulate: the running sum of a parameter's microbatch gradients, nanoGPT's gradient accumulation (loss / n per
// micro step, .grad summed): scale · grad at micro step k = 1 (acc is not read: it holds the last update's sum), acc +
// scale · grad after; in float64, stored as float32 once. The strided loop is elementwise-pair.ts's.
import { checkOptimizerStepValue, type GradAccumulateAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInputs, attrsOf } from "./adapter.js";
import { writePairRows } from "./elementwise-pair.js";

/** Inputs: acc [...], grad [...], step [] or [1] (the micro step k, 1 first); attrs { scale } → acc's shape. */
export const gradAccumulateKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [acc, grad, step] = requireInputs(call, "acc", "grad", "step");
  const { scale } = attrsOf<GradAccumulateAttrs>(call);
  const k = checkOptimizerStepValue(call, step.data[step.offset] ?? NaN);
  return writePairRows(call, chunkWork, k === 1 ? "restart" : "accumulate", acc, grad, scale);
});
