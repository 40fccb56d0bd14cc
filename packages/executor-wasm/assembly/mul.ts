// a · b over rows of a broadcast (the gate product of a SiLU-gated MLP): the host merges the broadcast shape into
// [rows, n] blocks exactly as for add (strides of 0 where an input stretches), and this multiplies one block. A float32
// product is exact-then-rounded, so it gives the CPU executor's numbers (a float64 product rounded) bit for bit.
import { PairParams } from "./add";
import { at } from "./strided";

/** `mulRows` of a PairParams block (assembly/add.ts; the module's export). */
export function mul(p: PairParams): void {
  mulRows(p.a, p.ars, p.acs, p.b, p.brs, p.bcs, p.dst, p.rows, p.n);
}

/**
 * dst[r, j] = a[r·ars + j·acs] · b[r·brs + j·bcs] for r < rows, j < n; dst dense [rows, n]. A contiguous input row
 * (stride 1) is read 4 lanes at a time; one that stretches along the row (stride 0) is one splatted value.
 */
export function mulRows(a: usize, ars: i32, acs: i32, b: usize, brs: i32, bcs: i32, dst: usize, rows: i32, n: i32): void {
  const n4 = n & ~3;
  let o = dst;
  for (let r: i32 = 0; r < rows; r++, o += <usize>n << 2) {
    const pa = at(a, r * ars);
    const pb = at(b, r * brs);
    let j: i32 = 0;
    if (acs == 1 && bcs == 1) {
      for (; j < n4; j += 4) {
        const k = <usize>j << 2;
        v128.store(o + k, f32x4.mul(v128.load(pa + k), v128.load(pb + k)));
      }
    } else if (acs == 1 && bcs == 0) {
      const vb = v128.load32_splat(pb);
      for (; j < n4; j += 4) {
        const k = <usize>j << 2;
        v128.store(o + k, f32x4.mul(v128.load(pa + k), vb));
      }
    } else if (acs == 0 && bcs == 1) {
      const va = v128.load32_splat(pa);
      for (; j < n4; j += 4) {
        const k = <usize>j << 2;
        v128.store(o + k, f32x4.mul(va, v128.load(pb + k)));
      }
    }
    for (; j < n; j++) store<f32>(o + (<usize>j << 2), load<f32>(at(pa, j * acs)) * load<f32>(at(pb, j * bcs)));
  }
}
