// position-embedding-grad: the table gradient of a position-embedding, grad [T, E] written at rows offset..offset+T-1
// of a zero [P, E]. The rows are distinct (no scatter-add), so this is pad along the rows: the same copy.
import type { PositionEmbeddingGradAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { outData, requireInput, result, attrsOf } from "./adapter.js";
import { padImpl } from "./pad.js";

/** Input: grad [T, E]; attrs { rows: P, offset (bound) } → [P, E], rows outside offset..offset+T-1 0. */
export const positionEmbeddingGradKernel: CpuKernel = (call) => {
  const grad = requireInput(call, 0, "grad");
  const p = attrsOf<PositionEmbeddingGradAttrs>(call).rows;
  const [t, e] = grad.shape as [number, number];
  const offset = attrsOf<{ offset: number }>(call).offset; // bound and in range: checkCall
  const shape = [p, e];
  return result(call, padImpl(grad, 0, offset, p - offset - t, outData(call, shape)), shape);
};
