// a · b over rows of a broadcast (the gate product of a SiLU-gated MLP): the host merges the broadcast shape into
// [rows, n] blocks exactly as for add (strides of 0 where an input stretches), and this multiplies one block. A float32
// product is exact-then-rounded, so it gives the CPU executor's numbers (a float64 product rounded) bit for bit.
import { PairParams, pairRows } from "./add";

/** `mulRows` of a PairParams block (assembly/add.ts; the module's export). */
export function mul(p: PairParams): void {
  mulRows(p.a, p.ars, p.acs, p.b, p.brs, p.bcs, p.dst, p.rows, p.n);
}

/** a · b, 4 lanes or one element at a time (pairRows' operation). */
@final @unmanaged class Product {
  @inline lanes(a: v128, b: v128): v128 { return f32x4.mul(a, b); }
  @inline one(a: f32, b: f32): f32 { return a * b; }
}

/** dst[r, j] = a[r·ars + j·acs] · b[r·brs + j·bcs] (pairRows, assembly/add.ts). */
export function mulRows(a: usize, ars: i32, acs: i32, b: usize, brs: i32, bcs: i32, dst: usize, rows: i32, n: i32): void {
  pairRows<Product>(a, ars, acs, b, brs, bcs, dst, rows, n);
}
