// A transposed dense copy: the matmul reads its A operand by rows with unit column stride, so the weight gradient
// gradᵀ · x first lays gradᵀ out that way. Four source rows at a time: contiguous rows go through a 4×4 lane shuffle
// (4 vector loads, 4 vector stores), strided ones element by element.
import { at, descDim, descStride, rowBase } from "./strided";

/**
 * Rows [r0, r1) of src (any view, descriptor `desc`: rows of n elements along its last axis) → columns [r0, r1) of
 * dst, row-major [n, ld]: dst[j·ld + r] = src row r, element j.
 */
export function transposeRows(src: usize, desc: usize, dst: usize, ld: i32, r0: i32, r1: i32): void {
  const n = descDim(desc, 5);
  const s = descStride(desc, 5);
  const n4 = n & ~3;
  const ldB = <usize>ld << 2;
  let r = r0;
  for (; r + 4 <= r1; r += 4) {
    const p0 = rowBase(desc, src, r);
    const p1 = rowBase(desc, src, r + 1);
    const p2 = rowBase(desc, src, r + 2);
    const p3 = rowBase(desc, src, r + 3);
    let o = dst + (<usize>r << 2);
    let j: i32 = 0;
    if (s == 1) {
      for (; j < n4; j += 4, o += ldB << 2) {
        const k = <usize>j << 2;
        const a = v128.load(p0 + k);
        const b = v128.load(p1 + k);
        const c = v128.load(p2 + k);
        const d = v128.load(p3 + k);
        const t0 = v128.shuffle<f32>(a, b, 0, 4, 1, 5);
        const t1 = v128.shuffle<f32>(a, b, 2, 6, 3, 7);
        const t2 = v128.shuffle<f32>(c, d, 0, 4, 1, 5);
        const t3 = v128.shuffle<f32>(c, d, 2, 6, 3, 7);
        v128.store(o, v128.shuffle<f32>(t0, t2, 0, 1, 4, 5));
        v128.store(o + ldB, v128.shuffle<f32>(t0, t2, 2, 3, 6, 7));
        v128.store(o + 2 * ldB, v128.shuffle<f32>(t1, t3, 0, 1, 4, 5));
        v128.store(o + 3 * ldB, v128.shuffle<f32>(t1, t3, 2, 3, 6, 7));
      }
    }
    for (; j < n; j++, o += ldB) {
      store<f32>(o, load<f32>(at(p0, j * s)));
      store<f32>(o, load<f32>(at(p1, j * s)), 4);
      store<f32>(o, load<f32>(at(p2, j * s)), 8);
      store<f32>(o, load<f32>(at(p3, j * s)), 12);
    }
  }
  for (; r < r1; r++) {
    const p = rowBase(desc, src, r);
    let o = dst + (<usize>r << 2);
    for (let j: i32 = 0; j < n; j++, o += ldB) store<f32>(o, load<f32>(at(p, j * s)));
  }
}
