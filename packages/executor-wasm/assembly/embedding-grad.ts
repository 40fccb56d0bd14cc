// embedding backward: a scatter-add of grad rows into the [V, E] table gradient (zeroed by the host first), in position
// order, float32 adds (4 lanes where a grad row is contiguous). The host has checked every id against [0, V)
// (findBadIndex) before calling; the check here only turns a broken promise into a trap instead of a write elsewhere.
import { LookupParams } from "./embedding";
import { at, descStride, elementAt, rowBase } from "./strided";

/**
 * Positions [k0, k1) of ids (int32, any view: descriptor `idesc`): dst[ids[k], :] += grad row k (grad any view [..., E],
 * descriptor `gdesc`, rows along E). dst dense [V, E].
 */
export function embeddingGrad(p: LookupParams, g: usize, gdesc: usize, dst: usize, k0: i32, k1: i32): void {
  const ids = p.ids, idesc = p.idesc, nv = p.nv, ne = p.ne;
  const gs = descStride(gdesc, 5);
  const n4 = gs == 1 ? ne & ~3 : 0;
  for (let k = k0; k < k1; k++) {
    const id = load<i32>(elementAt(idesc, ids, k));
    if (<u32>id >= <u32>nv) unreachable();
    const o = dst + ((<usize>id * <usize>ne) << 2);
    const p = rowBase(gdesc, g, k);
    let j: i32 = 0;
    for (; j < n4; j += 4) {
      const b = <usize>j << 2;
      v128.store(o + b, f32x4.add(v128.load(o + b), v128.load(p + b)));
    }
    for (; j < ne; j++) {
      const q = o + (<usize>j << 2);
      store<f32>(q, load<f32>(q) + load<f32>(at(p, j * gs)));
    }
  }
}
