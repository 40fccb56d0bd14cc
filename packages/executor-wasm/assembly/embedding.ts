// embedding: out[k, :] = weight[ids[k], :], a row copy per position. The host has checked every id against [0, V)
// (findBadIndex) before calling; the check here only turns a broken promise into a trap instead of a read of other
// memory.
import { at, elementAt } from "./strided";

/**
 * The ids embedding and embeddingGrad look up, a block written field by field by name on the host
 * (src/kernels/embedding.ts, LOOKUP_FIELDS, in this declaration order, 4 bytes a field; a test holds
 * the offsets to the compiler's): ids (descriptor idesc), the vocabulary size nv and the embedding size ne.
 */
@unmanaged export class LookupParams {
  ids: usize; idesc: usize; nv: i32; ne: i32;
}

/**
 * Positions [k0, k1) of ids (int32, any view: descriptor `desc`) → rows [k0, k1) of dst, dense [N, E]. weight [V, E]
 * with element strides (ws0, ws1); a contiguous weight row is one memory.copy.
 */
export function embedding(p: LookupParams, w: usize, ws0: i32, ws1: i32, dst: usize, k0: i32, k1: i32): void {
  const ids = p.ids, desc = p.idesc, nv = p.nv, ne = p.ne;
  const rowBytes = <usize>ne << 2;
  let o = dst + <usize>k0 * rowBytes;
  for (let k = k0; k < k1; k++, o += rowBytes) {
    const id = load<i32>(elementAt(desc, ids, k));
    if (<u32>id >= <u32>nv) unreachable();
    const row = at(w, id * ws0);
    if (ws1 == 1) memory.copy(o, row, rowBytes);
    else for (let j: i32 = 0; j < ne; j++) store<f32>(o + (<usize>j << 2), load<f32>(at(row, j * ws1)));
  }
}
