// position-embedding-grad: grad [T, E] written at rows offset..offset+T-1 of a zero [P, E]. The rows are distinct (no
// scatter-add as in embedding-grad), so this is pad along the rows: pad.wgsl.ts's program with `offset` rows before,
// zero-fill and copy in one pass, values moved as u32 bit for bit. The bound offset is checked on the host first.
import type { WebGpuKernel } from "../executor.js";
import { attrsOf, input } from "./inputs.js";
import { padProgram } from "./pad.wgsl.js";
// The offset check stays here (@attngraph/graph kernel-checks): the declaration lets a dim name through, which a
// kernel cannot use, and checks offset + T <= P only once the offset is a number.
import type { PositionEmbeddingGradAttrs } from "@attngraph/graph";

/** Input: grad [T, E]; attrs { rows: P, offset (bound) } → [P, E], rows outside offset..offset+T-1 0. */
export const positionEmbeddingGradKernel: WebGpuKernel = async (call, gpu) => {
  const g = input(call, 0);
  // offset bound, and offset + T <= P: checkCall
  const { rows: np, offset } = attrsOf<PositionEmbeddingGradAttrs & { offset: number }>(call);
  const ne = g.shape[1]!;
  const out = gpu.alloc([np, ne]);
  if (out.size > 0) await gpu.run(padProgram(g, 0, offset, out));
  return out;
};
