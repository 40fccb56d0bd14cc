// a + b over rows of a broadcast: the host merges the broadcast shape into [rows, n] blocks (strides of 0 where an
// input stretches), and this adds one block. Float32 addition is exact-then-rounded, so it gives the CPU executor's
// numbers (a float64 sum rounded to float32) bit for bit.
import { at } from "./strided";

/**
 * One [rows, n] block of a broadcast pair, as add, mul and addLayerNorm take it: written field by field by name on
 * the host (src/kernels/add.ts, PAIR_FIELDS, in this declaration order, 4 bytes a field; a test holds
 * the offsets to the compiler's). a and b with their row and column strides (float32 elements), dst, rows and n.
 */
@unmanaged export class PairParams {
  a: usize; ars: i32; acs: i32;
  b: usize; brs: i32; bcs: i32;
  dst: usize; rows: i32; n: i32;
}

/** `addRows` of a PairParams block (the module's export). */
export function add(p: PairParams): void {
  addRows(p.a, p.ars, p.acs, p.b, p.brs, p.bcs, p.dst, p.rows, p.n);
}

/** a + b, 4 lanes or one element at a time (pairRows' operation). */
@final @unmanaged class Sum {
  @inline lanes(a: v128, b: v128): v128 { return f32x4.add(a, b); }
  @inline one(a: f32, b: f32): f32 { return a + b; }
}

/** dst[r, j] = a[r·ars + j·acs] + b[r·brs + j·bcs] (pairRows). */
export function addRows(a: usize, ars: i32, acs: i32, b: usize, brs: i32, bcs: i32, dst: usize, rows: i32, n: i32): void {
  pairRows<Sum>(a, ars, acs, b, brs, bcs, dst, rows, n);
}

/**
 * dst[r, j] = a[r·ars + j·acs] ∘ b[r·brs + j·bcs] for r < rows, j < n, ∘ the operation Op (an @unmanaged class of
 * @inline `lanes` and `one`, never instantiated: each caller inlines its own); dst dense [rows, n]. A contiguous
 * input row (stride 1) is read 4 lanes at a time; one that stretches along the row (stride 0) is one splatted value.
 */
@inline export function pairRows<Op>(a: usize, ars: i32, acs: i32, b: usize, brs: i32, bcs: i32, dst: usize, rows: i32, n: i32): void {
  const op = changetype<Op>(0);
  const n4 = n & ~3;
  let o = dst;
  for (let r: i32 = 0; r < rows; r++, o += <usize>n << 2) {
    const pa = at(a, r * ars);
    const pb = at(b, r * brs);
    let j: i32 = 0;
    if (acs == 1 && bcs == 1) {
      for (; j < n4; j += 4) {
        const k = <usize>j << 2;
        v128.store(o + k, op.lanes(v128.load(pa + k), v128.load(pb + k)));
      }
    } else if (acs == 1 && bcs == 0) {
      const vb = v128.load32_splat(pb);
      for (; j < n4; j += 4) {
        const k = <usize>j << 2;
        v128.store(o + k, op.lanes(v128.load(pa + k), vb));
      }
    } else if (acs == 0 && bcs == 1) {
      const va = v128.load32_splat(pa);
      for (; j < n4; j += 4) {
        const k = <usize>j << 2;
        v128.store(o + k, op.lanes(va, v128.load(pb + k)));
      }
    }
    for (; j < n; j++) store<f32>(o + (<usize>j << 2), op.one(load<f32>(at(pa, j * acs)), load<f32>(at(pb, j * bcs))));
  }
}
