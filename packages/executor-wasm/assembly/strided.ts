// The one index/stride helper every kernel shares. Pointers are byte addresses into the imported memory; strides and
// offsets are in float32 elements (as the TypeScript side's values keep them). A "descriptor" is 12 i32 values the
// host writes into memory: a view normalised to rank 6 (shape[6] then strides[6], leading dims padded with size 1),
// walked as rows along the last axis.

/** Address of element `index` (may be negative) from `base`, for a float32 array. */
@inline export function at(base: usize, index: i32): usize {
  return base + (<usize>(index << 2));
}

@inline export function descDim(desc: usize, d: i32): i32 {
  return load<i32>(desc + (<usize>d << 2));
}

@inline export function descStride(desc: usize, d: i32): i32 {
  return load<i32>(desc + (<usize>(d + 6) << 2));
}

/** Number of rows (product of the 5 leading dims). */
export function descRows(desc: usize): i32 {
  return descDim(desc, 0) * descDim(desc, 1) * descDim(desc, 2) * descDim(desc, 3) * descDim(desc, 4);
}

/** Address of the first element of row `r` (row-major over the 5 leading dims) of the view at `base`. */
export function rowBase(desc: usize, base: usize, r: i32): usize {
  let off: i32 = 0;
  for (let d: i32 = 4; d >= 0; d--) {
    const n = descDim(desc, d);
    off += (r % n) * descStride(desc, d);
    r /= n;
  }
  return at(base, off);
}

/**
 * Address of element `k` (row-major over the whole view) of the view at `base`: row k / n, column k % n. For kernels
 * that read one element per row of another input (an embedding's ids, a cross-entropy's targets).
 */
export function elementAt(desc: usize, base: usize, k: i32): usize {
  const n = descDim(desc, 5);
  return at(rowBase(desc, base, k / n), (k % n) * descStride(desc, 5));
}

/** Address of [b, h, i, 0] of a rank-4 view with strides (s0, s1, s2). */
@inline export function rowOf4(base: usize, b: i32, h: i32, i: i32, s0: i32, s1: i32, s2: i32): usize {
  return at(base, b * s0 + h * s1 + i * s2);
}

/** Dense row-major copy of any view (reshape that cannot be a view, strided operands before a matmul). */
export function copy(src: usize, desc: usize, dst: usize): void {
  const rows = descRows(desc);
  const n = descDim(desc, 5);
  const s = descStride(desc, 5);
  let o = dst;
  for (let r: i32 = 0; r < rows; r++) {
    let p = rowBase(desc, src, r);
    if (s == 1) {
      memory.copy(o, p, <usize>n << 2);
      o += <usize>n << 2;
    } else {
      const step = <usize>(s << 2);
      for (let j: i32 = 0; j < n; j++) {
        store<f32>(o, load<f32>(p));
        p += step;
        o += 4;
      }
    }
  }
}
