// position-embedding: rows offset..offset+T-1 of a learned position table (GPT-2's wpe), T the ids' last dim. The ids
// are read for their shape only. The offset (bound per run when the graph names a dim) is checked against the table's
// rows before anything is read: positions past the block size are the caller's bug, never a read of other memory.
import type { CpuKernel } from "../executor.js";
import { attrsOf, intInput, outData, requireInput, result } from "./adapter.js";
import { embeddingImpl } from "./embedding.js";
import type { StridedView } from "./strided.js";

/**
 * out[t, :] = table[offset + t, :] for t < n (offset + n already checked to be <= P): embedding's gather of the ids
 * offset, offset + 1, …, offset + n − 1.
 * @param table [P, E], any strides
 */
export function positionEmbeddingImpl(table: StridedView, offset: number, n: number, out?: Float32Array): Float32Array {
  return embeddingImpl(
    Int32Array.from({ length: n }, (_, t) => offset + t),
    table,
    out,
  );
}

/** Inputs: ids [..., T] int32 (shape only), weight [P, E]; attrs { offset (bound) } → [T, E]. */
export const positionEmbeddingKernel: CpuKernel = (call) => {
  const ids = intInput(call, 0, "ids");
  const table = requireInput(call, 1, "weight");
  const t = ids.shape[ids.rank - 1]!;
  const offset = attrsOf<{ offset: number }>(call).offset; // bound and in range: checkCall
  const shape = [t, table.shape[1]!];
  return result(call, positionEmbeddingImpl(table, offset, t, outData(call, shape)), shape);
};
