// SiLU, x · sigmoid(x), and its gradient grad · (s + x · s(1 − s)), in float64 per element. The sigmoid is built from
// exp(−|x|) only, so it never overflows: a large negative x gives −0 (and a gradient of 0), +∞ gives +∞. Scalar
// float64 (libm exp), so both module flavours give the same bits.
import { at, descDim, descStride, rowBase } from "./strided";

@inline function sigmoid(v: f64): f64 {
  const z = Math.exp(-Math.abs(v));
  return v >= 0 ? 1 / (1 + z) : z / (1 + z);
}

/** Rows [r0, r1) of any view (descriptor `desc`) → the same rows of dst, dense (dst may be src: read before write). */
export function silu(src: usize, desc: usize, dst: usize, r0: i32, r1: i32): void {
  const n = descDim(desc, 5);
  const s = descStride(desc, 5);
  for (let r = r0; r < r1; r++) {
    const p = rowBase(desc, src, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    for (let j: i32 = 0; j < n; j++) {
      const v = <f64>load<f32>(at(p, j * s));
      store<f32>(o + (<usize>j << 2), <f32>(v * sigmoid(v)));
    }
  }
}

/** Rows [r0, r1) of grad and x (any views) → the same rows of dst, dense. */
export function siluGrad(g: usize, gdesc: usize, x: usize, xdesc: usize, dst: usize, r0: i32, r1: i32): void {
  const n = descDim(xdesc, 5);
  const xs = descStride(xdesc, 5);
  const gs = descStride(gdesc, 5);
  for (let r = r0; r < r1; r++) {
    const px = rowBase(xdesc, x, r);
    const pg = rowBase(gdesc, g, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    for (let j: i32 = 0; j < n; j++) {
      const v = <f64>load<f32>(at(px, j * xs));
      const sg = sigmoid(v);
      store<f32>(o + (<usize>j << 2), <f32>(<f64>load<f32>(at(pg, j * gs)) * (sg + v * (sg * (1 - sg)))));
    }
  }
}
