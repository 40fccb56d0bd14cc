// ReLU backward from the forward output, as PyTorch's threshold_backward: grad with the lanes where y <= 0 cleared. A
// mask, not a product with (y > 0): a NaN or infinite grad where y <= 0 still gives 0, and a NaN y (compares false)
// lets grad through. Exact, so both module flavours give the same bits.
import { loadSome, storeSome } from "./gelu";
import { loadSome4 } from "./gelu-grad";
import { descDim, descStride, rowBase } from "./strided";

@inline function reluGrad4(g: v128, y: v128): v128 {
  return v128.andnot(g, f32x4.le(y, f32x4.splat(0)));
}

/** n contiguous elements of grad and y → dst (dst may be either: each vector is read before it is written). */
export function reluGrad(g: usize, y: usize, dst: usize, n: i32): void {
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    v128.store(dst + k, reluGrad4(v128.load(g + k), v128.load(y + k)));
  }
  if (j < n) {
    const k = <usize>j << 2;
    storeSome(dst + k, reluGrad4(loadSome(g + k, 4, n - j), loadSome(y + k, 4, n - j)), n - j);
  }
}

/** Rows [r0, r1) of grad and y (any views, descriptors `gdesc` and `ydesc`) → the same rows of dst, dense. */
export function reluGradStrided(g: usize, gdesc: usize, y: usize, ydesc: usize, dst: usize, r0: i32, r1: i32): void {
  const n = descDim(ydesc, 5);
  const gstep = <usize>(descStride(gdesc, 5) << 2);
  const ystep = <usize>(descStride(ydesc, 5) << 2);
  const n4 = n & ~3;
  for (let r = r0; r < r1; r++) {
    let pg = rowBase(gdesc, g, r);
    let py = rowBase(ydesc, y, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    let j: i32 = 0;
    for (; j < n4; j += 4, pg += gstep << 2, py += ystep << 2) {
      v128.store(o + (<usize>j << 2), reluGrad4(loadSome4(pg, gstep), loadSome4(py, ystep)));
    }
    if (j < n) storeSome(o + (<usize>j << 2), reluGrad4(loadSome(pg, gstep, n - j), loadSome(py, ystep, n - j)), n - j);
  }
}
