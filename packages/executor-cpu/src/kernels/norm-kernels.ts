// The kernel adapters of the norms and their gradients: layer-norm and rms-norm, their input gradients and their weight
// gradients. Each pair reads the same inputs by slot and the same { eps } (rms-norm's attributes are layer norm's), and
// plans its rows the same way, once per chunk, so each Impl is only its per-row arithmetic on a row plan (row-plan.ts).
import type { LayerNormAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import type { ChunkedCpuKernel } from "../executor.js";
import { optionalInput, requireInput, attrsOf } from "./adapter.js";
import { paramVector, type ParamVector } from "./norm-rows.js";
import { sumRows, writeRows } from "./row-kernel.js";
import { planRows, type RowPlan } from "./row-plan.js";
import type { StridedView } from "./strided.js";

/** The rows of x [..., E]. */
export type XRows = RowPlan<readonly [StridedView]>;
/** The rows of x and of grad [..., E], side by side (x first: the row statistics are x's). */
export type XGradRows = RowPlan<readonly [StridedView, StridedView]>;

/**
 * Inputs: x [..., E], optional weight [E] (and, `withBias`, optional bias [E]); attrs { eps } → [..., E].
 * @param impl writes the rows `x` plans into y (row-major); an absent weight or bias has undefined data (rms-norm,
 *   without a bias, takes no bias parameter)
 * @param elementWork the work of one element, in multiply-adds of the matmul core
 */
export function normKernel(
  withBias: boolean,
  impl: (x: XRows, eps: number, y: Float32Array, weight: ParamVector, bias: ParamVector) => void,
  elementWork: number,
): ChunkedCpuKernel {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const x = requireInput(call, 0, "x");
    const weight = paramVector(optionalInput(call, 1, "weight"));
    const bias = paramVector(withBias ? optionalInput(call, 2, "bias") : undefined);
    const { eps } = attrsOf<LayerNormAttrs>(call);
    return writeRows(call, chunkWork, x.shape, elementWork, (y, part) => impl(planRows(part, x), eps, y, weight, bias));
  });
}

/**
 * Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E].
 * @param impl writes dx of the rows `rows` plans into dx (row-major)
 */
export function normGradKernel(
  impl: (rows: XGradRows, eps: number, dx: Float32Array, weight: ParamVector) => void,
  elementWork: number,
): ChunkedCpuKernel {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const grad = requireInput(call, 0, "grad");
    const x = requireInput(call, 1, "x");
    const weight = paramVector(optionalInput(call, 2, "weight"));
    const { eps } = attrsOf<LayerNormAttrs>(call);
    return writeRows(call, chunkWork, x.shape, elementWork, (dx, part) =>
      impl(planRows(part, x, grad), eps, dx, weight),
    );
  });
}

/**
 * Inputs: grad [..., E], x [..., E]; attrs { eps } → [E], the float64 sum over rows stored as float32 once.
 * @param impl adds the weight gradient of the rows `rows` plans into `acc` [E], rows in order (so one part or several
 *   give the same numbers, bit for bit)
 */
export function normWeightGradKernel(
  impl: (rows: XGradRows, eps: number, acc: Float64Array) => void,
  elementWork: number,
): ChunkedCpuKernel {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const grad = requireInput(call, 0, "grad");
    const x = requireInput(call, 1, "x");
    const { eps } = attrsOf<LayerNormAttrs>(call);
    return sumRows(call, chunkWork, x.shape, elementWork, (acc, part) => impl(planRows(part, x, grad), eps, acc));
  });
}
