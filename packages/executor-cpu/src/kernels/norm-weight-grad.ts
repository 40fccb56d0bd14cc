// The kernel adapter of layer-norm-weight-grad and rms-norm-weight-grad: the same inputs (grad, x), the same eps and
// the same float64 sum over rows, only the per-row term differs (the Impl).
import type { LayerNormGradAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import type { ChunkedCpuKernel } from "../executor.js";
import { requireInput, attrsOf } from "./adapter.js";
import { sumRows } from "./row-kernel.js";
import type { RowRange, StridedView } from "./strided.js";

/** Adds the weight gradient of rows `part` into `acc` [E], rows in order. */
export type NormWeightGradImpl = (
  grad: StridedView,
  x: StridedView,
  eps: number,
  acc: Float64Array,
  part?: RowRange,
) => Float64Array;

/**
 * Inputs: grad [..., E], x [..., E]; attrs { eps } → [E].
 * @param elementWork the work of one input element, in multiply-adds of the matmul core
 */
export function normWeightGradKernel(impl: NormWeightGradImpl, elementWork: number): ChunkedCpuKernel {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const grad = requireInput(call, 0, "grad");
    const x = requireInput(call, 1, "x");
    const { eps } = attrsOf<LayerNormGradAttrs>(call); // rms-norm's gradients have the same { eps }
    return sumRows(call, chunkWork, x.shape, elementWork, (acc, part) => impl(grad, x, eps, acc, part));
  });
}
