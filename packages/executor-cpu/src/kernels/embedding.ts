// embedding: rows of a table by int32 id (token embeddings). Every id is checked before anything is written: an id
// outside the table is the caller's bug, reported with its position, never a read of some other row.
import { findBadIndex } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { intInput, outData, requireInput, result } from "./adapter.js";
import type { StridedView } from "./strided.js";

/**
 * out[k, :] = table[ids[k], :] for the ids in row-major order (already checked to lie in [0, V)).
 * @param table [V, E], any strides
 */
export function embeddingImpl(ids: Int32Array, table: StridedView, out?: Float32Array): Float32Array {
  const e = table.shape[1]!;
  const [s0, s1] = table.strides as [number, number];
  const td = table.data;
  const y = out ?? new Float32Array(ids.length * e);
  for (let k = 0; k < ids.length; k++) {
    const base = table.offset + ids[k]! * s0;
    if (s1 === 1) y.set(td.subarray(base, base + e), k * e);
    else for (let j = 0; j < e; j++) y[k * e + j] = td[base + j * s1]!;
  }
  return y;
}

/** Inputs: ids [...] int32, weight [V, E] → [..., E]. */
export const embeddingKernel: CpuKernel = (call) => {
  const ids = intInput(call, 0, "ids");
  const table = requireInput(call, 1, "weight");
  const flat = ids.toInt32Array();
  const bad = findBadIndex(call, "ids", flat, ids.shape, table.shape[0]!, "token id");
  if (bad) throw bad;
  const shape = [...ids.shape, table.shape[1]!];
  return result(call, embeddingImpl(flat, table, outData(call, shape)), shape);
};
