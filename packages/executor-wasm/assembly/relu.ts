// ReLU on 4 float32 lanes: x with the lanes where x <= 0 cleared (andnot with the compare mask), so a NaN lane (which
// compares false) stays NaN as torch.relu keeps it, and −0 and −∞ give +0. A mask rather than f32x4.max: a NaN keeps
// its own bits (max may canonicalize them), and it is the very test relu-grad makes on y (pmax would keep −0). Exact,
// so both module flavours give the same bits.
import { loadSome, storeSome } from "./gelu";
import { descDim, descStride, rowBase } from "./strided";

@inline export function relu4(x: v128): v128 {
  return v128.andnot(x, f32x4.le(x, f32x4.splat(0)));
}

/** n contiguous elements from src → dst (dst may be src: each vector is read before it is written). */
export function relu(src: usize, dst: usize, n: i32): void {
  const n4 = n & ~3;
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const at = <usize>j << 2;
    v128.store(dst + at, relu4(v128.load(src + at)));
  }
  if (j < n) storeSome(dst + (<usize>j << 2), relu4(loadSome(src + (<usize>j << 2), 4, n - j)), n - j);
}

/** Rows [r0, r1) of any view (descriptor `desc`) → the same rows of dst, dense. */
export function reluStrided(src: usize, desc: usize, dst: usize, r0: i32, r1: i32): void {
  const n = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  const n4 = n & ~3;
  for (let r = r0; r < r1; r++) {
    let p = rowBase(desc, src, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    let j: i32 = 0;
    for (; j < n4; j += 4, p += step << 2) {
      let v = f32x4.splat(load<f32>(p));
      v = f32x4.replace_lane(v, 1, load<f32>(p + step));
      v = f32x4.replace_lane(v, 2, load<f32>(p + 2 * step));
      v = f32x4.replace_lane(v, 3, load<f32>(p + 3 * step));
      v128.store(o + (<usize>j << 2), relu4(v));
    }
    if (j < n) storeSome(o + (<usize>j << 2), relu4(loadSome(p, step, n - j)), n - j);
  }
}
