// The two loops every optimizer update (adam.ts, sgd.ts) runs, written once: three float32 operands x, y, z → dst,
// elementwise in float64 (f64x2 lanes, 4 elements at a time where the rows are contiguous), rounded once to float32.
// The update is a type argument U, an @unmanaged class of @inline methods never instantiated (AssemblyScript has no
// static calls on a type argument), so each export inlines its own formula into its own copy of the loop, as fast as
// a loop written out per update. c0..c3: the update's numbers (its own meaning each); `flag` and `hasParam` as in
// OptimParams. Callers that pass a literal flag (sgdStep's mode) keep only that flag's branch in the inlined copy.
import { promoteHigh, promoteLow } from "./layer-norm";
import { demote2 } from "./softmax-grad";
import { at, descDim, descStride, rowBase } from "./strided";

// What an update class U supplies, each an @inline method (the loops call them on a U typed null: no fields read):
// - readsX(flag, hasParam), readsY, readsZ: whether that operand is read (one not read may be any address, 0);
// - lane2(x, y, z, c0, c1, c2, c3, flag, hasParam): one float64 pair of each operand (0 where not read) → the update's;
// - lane1(the same, scalars): one element of each in float64 → the update, rounded to float32.

@inline function load4(reads: bool, address: usize): v128 {
  return reads ? v128.load(address) : f32x4.splat(0);
}

@inline function load1(reads: bool, address: usize): f64 {
  return reads ? <f64>load<f32>(address) : 0;
}

/** 4 elements of x, y and z at contiguous addresses → dst. */
@inline function update4<U>(x: usize, y: usize, z: usize, dst: usize, c0: v128, c1: v128, c2: v128, c3: v128, flag: i32, hasParam: bool): void {
  const u = changetype<U>(0);
  const vx = load4(u.readsX(flag, hasParam), x);
  const vy = load4(u.readsY(flag, hasParam), y);
  const vz = load4(u.readsZ(flag, hasParam), z);
  const lo = u.lane2(promoteLow(vx), promoteLow(vy), promoteLow(vz), c0, c1, c2, c3, flag, hasParam);
  const hi = u.lane2(promoteHigh(vx), promoteHigh(vy), promoteHigh(vz), c0, c1, c2, c3, flag, hasParam);
  v128.store(dst, demote2(lo, hi));
}

/** n contiguous elements of x, y and z → dst (dst may be one of them: each element is read before it is written). */
@inline export function updateSpan<U>(x: usize, y: usize, z: usize, dst: usize, n: i32, c0: f64, c1: f64, c2: f64, c3: f64, flag: i32, hasParam: bool): void {
  updateRow<U>(x, 1, y, 1, z, dst, n & ~3, n, c0, c1, c2, c3, flag, hasParam);
}

/**
 * Rows [r0, r1) of x and y (any views, descriptors `xdesc` and `ydesc`) and of z (dense row-major) → the same rows of
 * dst, dense. The row length comes from x's descriptor, or y's where x is not read (its descriptor may be unwritten).
 */
@inline export function updateRows<U>(x: usize, xdesc: usize, y: usize, ydesc: usize, z: usize, dst: usize, r0: i32, r1: i32, c0: f64, c1: f64, c2: f64, c3: f64, flag: i32, hasParam: bool): void {
  const u = changetype<U>(0);
  const readsX = u.readsX(flag, hasParam), readsY = u.readsY(flag, hasParam);
  const n = descDim(readsX ? xdesc : ydesc, 5);
  const xs = descStride(xdesc, 5);
  const ys = descStride(ydesc, 5);
  const n4 = (!readsX || xs == 1) && (!readsY || ys == 1) ? n & ~3 : 0;
  for (let r = r0; r < r1; r++) {
    const px: usize = readsX ? rowBase(xdesc, x, r) : 0;
    const py: usize = readsY ? rowBase(ydesc, y, r) : 0;
    const row = (<usize>r * <usize>n) << 2;
    updateRow<U>(px, xs, py, ys, z + row, dst + row, n4, n, c0, c1, c2, c3, flag, hasParam);
  }
}

/**
 * One row of n elements of x and y (`xs` and `ys` elements apart) and z (contiguous) → dst (contiguous): the first n4
 * (0, or n & ~3 where x and y are contiguous too) 4 at a time, the rest one by one.
 */
@inline function updateRow<U>(px: usize, xs: i32, py: usize, ys: i32, pz: usize, o: usize, n4: i32, n: i32, c0: f64, c1: f64, c2: f64, c3: f64, flag: i32, hasParam: bool): void {
  const u = changetype<U>(0);
  const v0 = f64x2.splat(c0);
  const v1 = f64x2.splat(c1);
  const v2 = f64x2.splat(c2);
  const v3 = f64x2.splat(c3);
  let j: i32 = 0;
  for (; j < n4; j += 4) {
    const k = <usize>j << 2;
    update4<U>(px + k, py + k, pz + k, o + k, v0, v1, v2, v3, flag, hasParam);
  }
  for (; j < n; j++) {
    const k = <usize>j << 2;
    const xv = load1(u.readsX(flag, hasParam), at(px, j * xs));
    const yv = load1(u.readsY(flag, hasParam), at(py, j * ys));
    const zv = load1(u.readsZ(flag, hasParam), pz + k);
    store<f32>(o + k, u.lane1(xv, yv, zv, c0, c1, c2, c3, flag, hasParam));
  }
}
