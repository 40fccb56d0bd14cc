// Reductions and layout ops of the backward pass: sum-to (the reverse of broadcasting, in float64), pad (zeros around
// a view along one axis), and `zero`. The host describes x twice for sum-to, as two views over x's memory: the KEPT
// axes (the output's, with x's strides: row-major like the output) and the REDUCED axes (x's leading axes and those
// where the output has 1, with x's strides). Two loop orders, the host picks the one that reads x the more contiguously.
import { promoteHigh, promoteLow } from "./layer-norm";
import { at, descDim, descRows, descStride, elementAt, rowBase } from "./strided";

/** Columns of one kept row summed at a time: TILE float64 accumulators (8 KiB, stay in L1). */
const TILE: i32 = 1024;
const ACC: usize = memory.data(TILE * 8, 16);

/** dst[0 .. bytes) = 0. */
export function zero(dst: usize, bytes: usize): void {
  memory.fill(dst, 0, bytes);
}

/** acc[0 .. n) += the n elements at p, `s` elements apart (float32 promoted to float64; 2 f64x2 lanes when s is 1). */
@inline function addRow(p: usize, s: i32, acc: usize, n: i32): void {
  let j: i32 = 0;
  if (s == 1) {
    const n4 = n & ~3;
    for (; j < n4; j += 4) {
      const v = v128.load(p + (<usize>j << 2));
      const a = acc + (<usize>j << 3);
      v128.store(a, f64x2.add(v128.load(a), promoteLow(v)));
      v128.store(a, f64x2.add(v128.load(a, 16), promoteHigh(v)), 16);
    }
  }
  for (; j < n; j++) {
    const a = acc + (<usize>j << 3);
    store<f64>(a, load<f64>(a) + <f64>load<f32>(at(p, j * s)));
  }
}

/**
 * Reduced axes outer, kept axes inner: rows [r0, r1) of the kept view (kdesc: rows along the output's last axis,
 * row-major like the output) → the same rows of dst, dense. For each tile of a row's columns, every reduced position
 * (rdesc, offsets from the row's first element) adds its strip of x into float64 accumulators, then they are rounded
 * once. For a kept last axis read contiguously (a bias gradient [B, T, E] → [E], GQA's [B, Hkv, g, S, D] → [B, Hkv, 1, S, D]).
 */
export function sumTo(x: usize, kdesc: usize, rdesc: usize, dst: usize, r0: i32, r1: i32): void {
  const n = descDim(kdesc, 5);
  const ks = descStride(kdesc, 5);
  const rrows = descRows(rdesc);
  const rn = descDim(rdesc, 5);
  const rs = descStride(rdesc, 5);
  for (let r = r0; r < r1; r++) {
    const row = rowBase(kdesc, x, r);
    const o = dst + ((<usize>r * <usize>n) << 2);
    for (let j0: i32 = 0; j0 < n; j0 += TILE) {
      const cols = min(TILE, n - j0);
      memory.fill(ACC, 0, <usize>cols << 3);
      const first = at(row, j0 * ks);
      for (let q: i32 = 0; q < rrows; q++) {
        let p = rowBase(rdesc, first, q);
        for (let t: i32 = 0; t < rn; t++, p = at(p, rs)) addRow(p, ks, ACC, cols);
      }
      for (let j: i32 = 0; j < cols; j++) store<f32>(o + (<usize>(j0 + j) << 2), <f32>load<f64>(ACC + (<usize>j << 3)));
    }
  }
}

/**
 * Kept axes outer, reduced axes inner: output elements [e0, e1) (row-major over the kept view) each the float64 sum of
 * its reduced positions, walked along the reduced view's rows (2 f64x2 lanes where they are contiguous). For a reduced
 * axis read more contiguously than the kept ones ([N, S] → [N, 1]).
 */
export function sumToInner(x: usize, kdesc: usize, rdesc: usize, dst: usize, e0: i32, e1: i32): void {
  const rrows = descRows(rdesc);
  const rn = descDim(rdesc, 5);
  const rs = descStride(rdesc, 5);
  const rn4 = rn & ~3;
  for (let e = e0; e < e1; e++) {
    const first = elementAt(kdesc, x, e);
    let a0 = f64x2.splat(0);
    let a1 = f64x2.splat(0);
    let sum: f64 = 0;
    for (let q: i32 = 0; q < rrows; q++) {
      const p = rowBase(rdesc, first, q);
      let t: i32 = 0;
      if (rs == 1) {
        for (; t < rn4; t += 4) {
          const v = v128.load(p + (<usize>t << 2));
          a0 = f64x2.add(a0, promoteLow(v));
          a1 = f64x2.add(a1, promoteHigh(v));
        }
      }
      for (; t < rn; t++) sum += <f64>load<f32>(at(p, t * rs));
    }
    const s2 = f64x2.add(a0, a1);
    store<f32>(dst + (<usize>e << 2), <f32>(sum + (f64x2.extract_lane(s2, 0) + f64x2.extract_lane(s2, 1))));
  }
}

/**
 * x (any view, descriptor `desc`) → dst dense, with `before` zeros ahead of and `after` zeros behind every group of
 * `rpc` rows of x (rows along x's last axis). The host picks rpc, before and after (in elements) so that the groups are
 * the slices x[o, ...] before the padded axis: padding the last axis is rpc = 1 with the counts as they are; an earlier
 * axis of length L with `inner` elements per index is rpc = L·inner / n with the counts times `inner`.
 */
export function pad(src: usize, desc: usize, dst: usize, rpc: i32, before: i32, after: i32): void {
  const rows = descRows(desc);
  const n = descDim(desc, 5);
  const s = descStride(desc, 5);
  const beforeBytes = <usize>before << 2;
  const afterBytes = <usize>after << 2;
  const rowBytes = <usize>n << 2;
  let o = dst;
  let k: i32 = 0; // row within its group
  for (let r: i32 = 0; r < rows; r++) {
    if (k == 0 && before > 0) {
      memory.fill(o, 0, beforeBytes);
      o += beforeBytes;
    }
    const p = rowBase(desc, src, r);
    if (s == 1) memory.copy(o, p, rowBytes);
    else for (let j: i32 = 0; j < n; j++) store<f32>(o + (<usize>j << 2), load<f32>(at(p, j * s)));
    o += rowBytes;
    if (++k == rpc) {
      k = 0;
      if (after > 0) {
        memory.fill(o, 0, afterBytes);
        o += afterBytes;
      }
    }
  }
}
