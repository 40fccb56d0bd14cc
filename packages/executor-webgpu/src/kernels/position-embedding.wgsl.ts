// position-embedding: rows offset..offset+T-1 of a learned [P, E] position table (GPT-2's wpe), T the ids' last dim;
// the ids are read for their shape only (never read back or bound). The rows are one range of the table, so this is the
// u32 copy program (copy.wgsl.ts) over a view of the weight, bit for bit, through any strides. The offset is bound
// and held to P by the declaration before the kernel runs: a view past the table is never even made.
import type { WebGpuKernel } from "../executor.js";
import { copyProgram } from "./copy.wgsl.js";
import { attrsOf, input } from "./inputs.js";
import type { PositionEmbeddingAttrs } from "@attngraph/graph";

/** Inputs: ids [..., T] int32 (shape only), weight [P, E] float32; attrs { offset (bound) } → [T, E]. */
export const positionEmbeddingKernel: WebGpuKernel = async (call, gpu) => {
  const ids = input(call, 0);
  const table = input(call, 1);
  const ne = table.shape[1]!;
  const nt = ids.shape[ids.rank - 1]!;
  const offset = attrsOf<PositionEmbeddingAttrs>(call).offset as number; // bound, offset + T <= P: checkCall
  const out = gpu.alloc([nt, ne]);
  if (out.size === 0) return out;
  const rows = gpu.view(table, [nt, ne], table.strides, table.offset + offset * table.strides[0]!);
  try {
    await gpu.run(copyProgram(rows, out));
  } finally {
    gpu.release(rows); // a view holds a reference to the table's storage
  }
  return out;
};
