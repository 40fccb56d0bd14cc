// C = A · B (+ bias) on a 5×8 register tile: 10 f32x4 accumulators, A broadcast with v128.load32_splat, B read from
// packed 8-column panels (the fused attention uses the 4×8 `micro` below). Blocked GotoBLAS-style: a k block of B (KC
// deep) is packed into panels that stay in L1 one at a time, while MC rows of A stay in L2 and are read in place (A
// needs unit column stride; the host packs other layouts with `copy` first). `matmulPacked` takes B packed beforehand
// (`packMatmulB`: a weight, packed once per upload by the host) and is otherwise the same loop, bit for bit.
import { madd } from "./simd";
import { at } from "./strided";
import { MAX_THREADS, threadSlot } from "./threads";

/** Depth of one k block: one packed B panel is KC × 8 floats (8 KiB). */
const KC: i32 = 256;
/** Rows of A per block: MC × KC floats (80 KiB), a multiple of the matmul tile's MR rows. */
const MC: i32 = 80;
/** Rows of the matmul's register tile (micro5); the fused attention keeps its 4×8 `micro`. */
const MR: i32 = 5;
/** An edge tile (fewer than MR rows or 8 columns) goes through an MR×8 buffer (one per thread: threads.ts). */
const TILE_BYTES: usize = MR * 8 * 4;
const TILE_AREA: usize = memory.data(<i32>TILE_BYTES * MAX_THREADS, 16);
/** An edge tile's A rows (fewer than MR), copied with the last repeated so one micro5 serves every edge (per thread). */
const EDGE_A_BYTES: usize = MR * KC * 4;
const EDGE_A_AREA: usize = memory.data(<i32>EDGE_A_BYTES * MAX_THREADS, 16);
/** This thread's edge-tile buffer. */
@inline function tileBuffer(): usize {
  return TILE_AREA + <usize>threadSlot * TILE_BYTES;
}

export const INIT_ZERO: i32 = 0;
export const INIT_ACCUMULATE: i32 = 1;
export const INIT_BIAS: i32 = 2;

/**
 * One full 4×8 tile: C[0..4, 0..8] = init + Σ_k A[r, k] · Bp[k, 0..8]. `a0..a3` are the 4 A rows (unit stride; a row
 * may repeat for an edge tile), `bp` a packed panel (8 floats per k), `c` row-major with `ldc` bytes per row. `init`:
 * zero, the current C (accumulate), or the 8 floats at `bias`.
 */
@inline export function micro(kc: i32, a0: usize, a1: usize, a2: usize, a3: usize, bp: usize, c: usize, ldc: usize, init: i32, bias: usize): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  if (init == INIT_ACCUMULATE) {
    c00 = v128.load(c); c01 = v128.load(c, 16);
    c10 = v128.load(c + ldc); c11 = v128.load(c + ldc, 16);
    c20 = v128.load(c + 2 * ldc); c21 = v128.load(c + 2 * ldc, 16);
    c30 = v128.load(c + 3 * ldc); c31 = v128.load(c + 3 * ldc, 16);
  } else if (init == INIT_BIAS) {
    c00 = v128.load(bias); c01 = v128.load(bias, 16);
    c10 = c00; c11 = c01; c20 = c00; c21 = c01; c30 = c00; c31 = c01;
  }
  for (let k: i32 = 0; k < kc; k++) {
    const b0 = v128.load(bp);
    const b1 = v128.load(bp, 16);
    let a = v128.load32_splat(a0);
    c00 = madd(a, b0, c00); c01 = madd(a, b1, c01);
    a = v128.load32_splat(a1);
    c10 = madd(a, b0, c10); c11 = madd(a, b1, c11);
    a = v128.load32_splat(a2);
    c20 = madd(a, b0, c20); c21 = madd(a, b1, c21);
    a = v128.load32_splat(a3);
    c30 = madd(a, b0, c30); c31 = madd(a, b1, c31);
    a0 += 4; a1 += 4; a2 += 4; a3 += 4; bp += 32;
  }
  v128.store(c, c00); v128.store(c, c01, 16);
  v128.store(c + ldc, c10); v128.store(c + ldc, c11, 16);
  v128.store(c + 2 * ldc, c20); v128.store(c + 2 * ldc, c21, 16);
  v128.store(c + 3 * ldc, c30); v128.store(c + 3 * ldc, c31, 16);
}

/**
 * The matmul's 5×8 tile: 10 f32x4 accumulators, 2 for B and 1 for the A broadcast: 13 of the 16 SIMD registers V8
 * gives x64 code (a 6×8 tile needs 15 and spills; 4×8 leaves the multiply-add units waiting on loads). A rows are
 * a0 + r·lda bytes, all 5 readable (kBlock copies an edge's rows so they are).
 */
@inline function micro5(kc: i32, a0: usize, lda: usize, bp: usize, c: usize, ldc: usize, init: i32, bias: usize): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  let c40 = f32x4.splat(0), c41 = f32x4.splat(0);
  if (init == INIT_ACCUMULATE) {
    c00 = v128.load(c); c01 = v128.load(c, 16);
    c10 = v128.load(c + ldc); c11 = v128.load(c + ldc, 16);
    c20 = v128.load(c + 2 * ldc); c21 = v128.load(c + 2 * ldc, 16);
    c30 = v128.load(c + 3 * ldc); c31 = v128.load(c + 3 * ldc, 16);
    c40 = v128.load(c + 4 * ldc); c41 = v128.load(c + 4 * ldc, 16);
  } else if (init == INIT_BIAS) {
    c00 = v128.load(bias); c01 = v128.load(bias, 16);
    c10 = c00; c11 = c01; c20 = c00; c21 = c01; c30 = c00; c31 = c01; c40 = c00; c41 = c01;
  }
  const end = a0 + (<usize>kc << 2);
  while (a0 < end) {
    const b0 = v128.load(bp);
    const b1 = v128.load(bp, 16);
    let a = v128.load32_splat(a0);
    c00 = madd(a, b0, c00); c01 = madd(a, b1, c01);
    a = v128.load32_splat(a0 + lda);
    c10 = madd(a, b0, c10); c11 = madd(a, b1, c11);
    a = v128.load32_splat(a0 + 2 * lda);
    c20 = madd(a, b0, c20); c21 = madd(a, b1, c21);
    a = v128.load32_splat(a0 + 3 * lda);
    c30 = madd(a, b0, c30); c31 = madd(a, b1, c31);
    a = v128.load32_splat(a0 + 4 * lda);
    c40 = madd(a, b0, c40); c41 = madd(a, b1, c41);
    a0 += 4; bp += 32;
  }
  v128.store(c, c00); v128.store(c, c01, 16);
  v128.store(c + ldc, c10); v128.store(c + ldc, c11, 16);
  v128.store(c + 2 * ldc, c20); v128.store(c + 2 * ldc, c21, 16);
  v128.store(c + 3 * ldc, c30); v128.store(c + 3 * ldc, c31, 16);
  v128.store(c + 4 * ldc, c40); v128.store(c + 4 * ldc, c41, 16);
}

/**
 * A tile of `rows` ≤ 5 × `cols` ≤ 8: straight into C when full, else through this thread's edge-tile buffer so nothing outside C is touched.
 * The 5 A rows at a0 (lda bytes apart) must all be readable; only the first `rows` are kept.
 */
function tile5(kc: i32, a0: usize, lda: usize, bp: usize, c: usize, ldc: usize, rows: i32, cols: i32, init: i32, bias: usize): void {
  if (rows == MR && cols == 8) {
    micro5(kc, a0, lda, bp, c, ldc, init, bias);
    return;
  }
  const tile = tileBuffer();
  if (init == INIT_ACCUMULATE) {
    for (let r: i32 = 0; r < rows; r++) for (let j: i32 = 0; j < cols; j++) store<f32>(tile + (<usize>(r * 8 + j) << 2), load<f32>(c + <usize>r * ldc + (<usize>j << 2)));
  }
  micro5(kc, a0, lda, bp, tile, 32, init, bias);
  for (let r: i32 = 0; r < rows; r++) for (let j: i32 = 0; j < cols; j++) store<f32>(c + <usize>r * ldc + (<usize>j << 2), load<f32>(tile + (<usize>(r * 8 + j) << 2)));
}

/** Floats of B packed for `matmulPacked`: every k block's 8-column panels, k × npad. */
export function packedBFloats(n: i32, k: i32): i32 {
  return k * ((n + 7) & ~7);
}

/** Bytes of scratch `matmul` needs for n columns and depth k (bias panel + one k block of packed B). */
export function matmulScratchBytes(n: i32, k: i32): i32 {
  const npad = (n + 7) & ~7;
  return (npad + min(k, KC) * npad) * 4 + 64;
}

/** Bytes of scratch `matmulPacked` needs for n columns (the bias panel). */
export function matmulPackedScratchBytes(n: i32): i32 {
  return ((n + 7) & ~7) * 4 + 64;
}

/** Packs B[k0 .. k0+kc, 0 .. n] into 8-column panels (panel j/8 at j·kc floats), zero beyond column n. */
function packB(b: usize, brs: i32, bcs: i32, k0: i32, kc: i32, n: i32, npad: i32, dst: usize): void {
  for (let j: i32 = 0; j < npad; j += 8) {
    const cols = min(8, n - j);
    let o = dst + (<usize>(j * kc) << 2);
    if (bcs == 1 && cols == 8) {
      for (let kk: i32 = 0; kk < kc; kk++) {
        const p = at(b, (k0 + kk) * brs + j);
        v128.store(o, v128.load(p));
        v128.store(o, v128.load(p, 16), 16);
        o += 32;
      }
    } else {
      for (let kk: i32 = 0; kk < kc; kk++) {
        const base = (k0 + kk) * brs + j * bcs;
        for (let jj: i32 = 0; jj < 8; jj++) store<f32>(o + (<usize>jj << 2), jj < cols ? load<f32>(at(b, base + jj * bcs)) : 0);
        o += 32;
      }
    }
  }
}

/**
 * B [k, n] (element [kk, j] at b + kk·brs + j·bcs) packed once for `matmulPacked`: k block k0 (KC deep) at k0·npad
 * floats from dst, in packB's panel layout. A weight packed at load time is then never packed again per call.
 */
export function packMatmulB(b: usize, brs: i32, bcs: i32, k: i32, n: i32, dst: usize): void {
  const npad = (n + 7) & ~7;
  for (let k0: i32 = 0; k0 < k; k0 += KC) packB(b, brs, bcs, k0, min(KC, k - k0), n, npad, dst + (<usize>(k0 * npad) << 2));
}

/** The bias [n] (any stride) into the zero-padded panel at dst, as INIT_BIAS reads it. */
function packBias(bias: usize, biasStride: i32, n: i32, dst: usize): void {
  const npad = (n + 7) & ~7;
  for (let j: i32 = 0; j < npad; j++) store<f32>(dst + (<usize>j << 2), j < n ? load<f32>(at(bias, j * biasStride)) : 0);
}

/**
 * One k block: C[0..m, 0..n] (init) + A[:, k0 .. k0+kc] · panels, MC rows of A at a time (they stay in L2) against
 * one 8-column panel at a time (it stays in L1). The last < MR rows of an MC block are copied once into this thread's
 * edge rows (EDGE_A_AREA), the last one repeated, so their tiles run the same micro5 on rows that exist.
 */
function kBlock(m: i32, n: i32, kc: i32, a: usize, ldaB: usize, panels: usize, c: usize, ldcB: usize, init: i32, biasP: usize): void {
  const edgeLda = <usize>KC << 2;
  const edgeA = EDGE_A_AREA + <usize>threadSlot * EDGE_A_BYTES;
  for (let i0: i32 = 0; i0 < m; i0 += MC) {
    const iEnd = min(m, i0 + MC);
    const full = i0 + (iEnd - i0) / MR * MR;
    const rest = iEnd - full;
    for (let r: i32 = 0; r < MR && rest > 0; r++) {
      memory.copy(edgeA + <usize>r * edgeLda, a + <usize>(full + min(r, rest - 1)) * ldaB, <usize>kc << 2);
    }
    for (let j: i32 = 0; j < n; j += 8) {
      const bp = panels + (<usize>(j * kc) << 2);
      const cols = min(8, n - j);
      const bj = biasP + (<usize>j << 2);
      for (let i = i0; i < full; i += MR) tile5(kc, a + <usize>i * ldaB, ldaB, bp, c + <usize>i * ldcB + (<usize>j << 2), ldcB, MR, cols, init, bj);
      if (rest > 0) tile5(kc, edgeA, edgeLda, bp, c + <usize>full * ldcB + (<usize>j << 2), ldcB, rest, cols, init, bj);
    }
  }
}

/**
 * C[m, n] (row-major, `ldc` elements per row) = A[m, k] · B[k, n] (+ bias[n]).
 * A: row r at a + r·lda elements, unit column stride. B: element [k, j] at b + k·brs + j·bcs (any strides, e.g. Wᵀ).
 * bias: 0 for none, else element j at bias + j·biasStride. `scratch`: `matmulScratchBytes(n, k)` bytes, 16-aligned.
 */
function matmulImpl(m: i32, n: i32, k: i32, a: usize, lda: i32, b: usize, brs: i32, bcs: i32, c: usize, ldc: i32, bias: usize, biasStride: i32, scratch: usize): void {
  const npad = (n + 7) & ~7;
  const biasP = scratch;
  const panels = scratch + (<usize>npad << 2);
  if (bias != 0) packBias(bias, biasStride, n, biasP);
  let k0: i32 = 0;
  do {
    const kc = min(KC, k - k0);
    packB(b, brs, bcs, k0, kc, n, npad, panels);
    const init = k0 > 0 ? INIT_ACCUMULATE : bias != 0 ? INIT_BIAS : INIT_ZERO;
    kBlock(m, n, kc, a + (<usize>k0 << 2), <usize>lda << 2, panels, c, <usize>ldc << 2, init, biasP);
    k0 += KC;
  } while (k0 < k);
}

/**
 * `matmul` with B already packed by `packMatmulB` (`packed`): the same numbers bit for bit (same tiles, same k
 * order), without packing B on every call. `scratch`: `matmulPackedScratchBytes(n)` bytes, 16-aligned.
 */
function matmulPackedImpl(m: i32, n: i32, k: i32, a: usize, lda: i32, packed: usize, c: usize, ldc: i32, bias: usize, biasStride: i32, scratch: usize): void {
  const npad = (n + 7) & ~7;
  if (bias != 0) packBias(bias, biasStride, n, scratch);
  if (m < MATVEC_ROWS) {
    for (let i: i32 = 0; i < m; i++) matvecPacked(n, k, a + (<usize>(i * lda) << 2), packed, c + (<usize>(i * ldc) << 2), bias != 0 ? scratch : 0, 0, n);
    return;
  }
  let k0: i32 = 0;
  do {
    const kc = min(KC, k - k0);
    const init = k0 > 0 ? INIT_ACCUMULATE : bias != 0 ? INIT_BIAS : INIT_ZERO;
    kBlock(m, n, kc, a + (<usize>k0 << 2), <usize>lda << 2, packed + (<usize>(k0 * npad) << 2), c, <usize>ldc << 2, init, scratch);
    k0 += KC;
  } while (k0 < k);
}

/** 1 when every element of the [rows, cols] matrix at b (element [r, c] at b + r·rs + c·cs) is finite, else 0. */
export function allFinite(b: usize, rs: i32, cs: i32, rows: i32, cols: i32): i32 {
  let z: f32 = 0;
  for (let r: i32 = 0; r < rows; r++) for (let c: i32 = 0; c < cols; c++) z += load<f32>(at(b, r * rs + c * cs)) * 0; // NaN for NaN, ±∞
  return z == 0 ? 1 : 0;
}

/**
 * C[m, n] = A[m, k] · B[k, n] over the k with A[i, k] ≠ 0 only (weighted-sum with a non-finite value: a key weighed
 * exactly 0 adds nothing, not even 0 · NaN). Plain f32 loops in the order k = 0, 1, …; A as in `matmul`.
 */
function matmulSkipZeroImpl(m: i32, n: i32, k: i32, a: usize, lda: i32, b: usize, brs: i32, bcs: i32, c: usize, ldc: i32): void {
  for (let i: i32 = 0; i < m; i++) {
    const crow = c + (<usize>(i * ldc) << 2);
    for (let j: i32 = 0; j < n; j++) store<f32>(crow + (<usize>j << 2), 0);
    for (let kk: i32 = 0; kk < k; kk++) {
      const w = load<f32>(a + (<usize>(i * lda + kk) << 2));
      if (w == 0) continue;
      for (let j: i32 = 0; j < n; j++) {
        const o = crow + (<usize>j << 2);
        store<f32>(o, load<f32>(o) + w * load<f32>(at(b, kk * brs + j * bcs)));
      }
    }
  }
}

/**
 * Below this many rows of A, `matmulPacked` runs `matvecPacked` row by row instead of the 5-row tile (which computes 5
 * rows for the 1 to 4 real ones, the last repeated). Measured at 768 × 768 (package README, "Speed"), µs per call
 * matvec / tile: 1 row ~40 / ~145, 2 rows ~80 / ~145, 3 rows ~115–125 / ~145, 4 rows ~158 / ~146 (B read once per row).
 */
const MATVEC_ROWS: i32 = 4;

/** MATVEC_ROWS, for the host: below it a threaded matmulPacked splits columns (`matvecPackedColumns`), not rows. */
export function matvecRows(): i32 {
  return MATVEC_ROWS;
}

/**
 * Columns [j0, j1) of `matmulPacked` for m < MATVEC_ROWS rows (j0 a multiple of 8): one thread's share of a
 * decoding step's projection. Each column is summed exactly as in the whole call. `scratch`: this thread's own
 * `matmulPackedScratchBytes(n)` (the bias panel is packed into it whole).
 */
function matvecPackedColumnsImpl(m: i32, n: i32, k: i32, a: usize, lda: i32, packed: usize, c: usize, ldc: i32, bias: usize, biasStride: i32, scratch: usize, j0: i32, j1: i32): void {
  if (bias != 0) packBias(bias, biasStride, n, scratch);
  for (let i: i32 = 0; i < m; i++) matvecPacked(n, k, a + (<usize>(i * lda) << 2), packed, c + (<usize>(i * ldc) << 2), bias != 0 ? scratch : 0, j0, min(j1, n));
}
/** Per thread: the partial sums of a matvec's last panel when n is not a multiple of 8 (its columns beyond n have no C). */
const MV_EDGE_AREA: usize = memory.data(32 * MAX_THREADS, 16);
/** Eight zeros: the starting sums of a panel without a bias. */
const ZERO_PANEL: usize = memory.data(32, 16);

/**
 * One row of `matmulPacked`, panels [j0/8, ⌈j1/8⌉) of it (j0 a multiple of 8; 0, n for all): c[j] = a[0 .. k] · B[:, j]
 * (+ the bias panel at `biasP`, 0 for none), on B's packed panels (k block k0 at k0 · npad floats, panel j/8 of it at
 * j · kc floats, 8 floats per k). Bound by streaming B, so the order B is read in is what matters:
 * - Full k blocks go three at a time, skewed (`skewedBlocks`): the three streams are three k blocks, each read front to
 *   back across panels, so each is one long run of memory the hardware prefetcher follows. Reading three neighbouring
 *   panels of one k block instead (8 KiB runs, then a jump) streams a weight from DRAM at 18–20 GB/s against 30–35
 *   skewed (a plain v128 read: 37–40); from L3 both run at 58–62 (plain read ~76). DRAM is where a model's weights are
 *   on every decoding step once its layers outgrow L3.
 * - The rest of k (fewer than three full blocks, and a partial one) goes three neighbouring panels at a time
 *   (`panelGroups`).
 * Each panel's sums pass between the two in C (or this thread's edge panel), as float32. Every column is still summed
 * as micro5 sums it, from 0 or its bias, one multiply-add per k in k order, a k block's sum continuing from the one
 * before it as micro5's INIT_ACCUMULATE does: the numbers are the tile's, bit for bit, and B is read once per row.
 */
function matvecPacked(n: i32, k: i32, a: usize, packed: usize, c: usize, biasP: usize, j0: i32, j1: i32): void {
  const npad = (n + 7) & ~7;
  const p0 = j0 >> 3;
  const p1 = min((j1 + 7) & ~7, npad) >> 3;
  if (p0 >= p1) return;
  mvA = a; mvPacked = packed; mvNpad = npad; mvC = c; mvBias = biasP;
  mvEdge = MV_EDGE_AREA + <usize>threadSlot * 32;
  mvLastFull = n >> 3;
  // No k at all: every column is its bias (or 0), as the tile would leave it (the host never sends k = 0 today).
  if (k <= 0) for (let p = p0; p < p1; p++) memory.copy(mvOut(p), mvStart(p, 0), 32);
  const fullBlocks = k / KC;
  let kb: i32 = 0;
  for (; kb + 3 <= fullBlocks; kb += 3) skewedBlocks(kb * KC, p0, p1);
  if (kb * KC < k) panelGroups(kb * KC, k, p0, p1);
  if (p1 > mvLastFull) for (let j: i32 = mvLastFull << 3; j < n; j++) store<f32>(c + (<usize>j << 2), load<f32>(mvEdge + (<usize>(j & 7) << 2)));
}

// The row `matvecPacked` is on (module globals are per instance, so per thread: threads.ts): A's row, B's panels and
// their padded width, C's row, the bias panel (0 for none), this thread's edge panel and the first panel with fewer
// than 8 columns in C.
let mvA: usize = 0, mvPacked: usize = 0, mvNpad: i32 = 0, mvC: usize = 0, mvBias: usize = 0, mvEdge: usize = 0, mvLastFull: i32 = 0;

/** Panel p's sums so far (and where they go next): its 8 floats of C, or the edge panel for a partial last one. */
@inline function mvOut(p: i32): usize {
  return p < mvLastFull ? mvC + (<usize>p << 5) : mvEdge;
}

/** Panel p's sums before the k block at k0: its bias (or zeros) for the first, else what the blocks before left. */
@inline function mvStart(p: i32, k0: i32): usize {
  return k0 > 0 ? mvOut(p) : mvBias != 0 ? mvBias + (<usize>p << 5) : ZERO_PANEL;
}

/** Panel p of the k block at k0 (kc deep). */
@inline function mvPanel(p: i32, k0: i32, kc: i32): usize {
  return mvPacked + (<usize>(k0 * mvNpad + (p << 3) * kc) << 2);
}

/**
 * Panels [p0, p1) over the three full k blocks from k0, skewed: step s runs panel p0 + s of the first block, p0 + s − 1
 * of the second and p0 + s − 2 of the third, so each block is read front to back, and a panel reaches a block the step
 * after the block before it left its sums. The first and last two steps have fewer than three panels in range.
 */
function skewedBlocks(k0: i32, p0: i32, p1: i32): void {
  const x = mvA + (<usize>k0 << 2);
  const k1 = k0 + KC, k2 = k1 + KC;
  for (let pa = p0; pa < p1 + 2; pa++) {
    const pb = pa - 1, pc = pa - 2;
    if (pc >= p0 && pa < p1) {
      threeBlocks(x, mvPanel(pa, k0, KC), mvStart(pa, k0), mvOut(pa), mvPanel(pb, k1, KC), mvOut(pb), mvOut(pb), mvPanel(pc, k2, KC), mvOut(pc), mvOut(pc));
      continue;
    }
    if (pa < p1) onePanel(x, KC, mvPanel(pa, k0, KC), mvStart(pa, k0), mvOut(pa));
    if (pb >= p0 && pb < p1) onePanel(x + (<usize>KC << 2), KC, mvPanel(pb, k1, KC), mvOut(pb), mvOut(pb));
    if (pc >= p0) onePanel(x + (<usize>KC << 3), KC, mvPanel(pc, k2, KC), mvOut(pc), mvOut(pc));
  }
}

/**
 * Three panels of three consecutive full k blocks at once (x: the first block's part of A; `ba`, `bb`, `bc` their
 * panels, `sa`… where each one's sums start, `oa`… where they go): six accumulators, the most V8 runs fastest here.
 */
function threeBlocks(x: usize, ba: usize, sa: usize, oa: usize, bb: usize, sb: usize, ob: usize, bc: usize, sc: usize, oc: usize): void {
  let c0 = v128.load(sa), c1 = v128.load(sa, 16), c2 = v128.load(sb), c3 = v128.load(sb, 16), c4 = v128.load(sc), c5 = v128.load(sc, 16);
  const end = x + (<usize>KC << 2);
  while (x < end) {
    const xa = v128.load32_splat(x), xb = v128.load32_splat(x, KC * 4), xc = v128.load32_splat(x, KC * 8);
    c0 = madd(xa, v128.load(ba), c0); c1 = madd(xa, v128.load(ba, 16), c1);
    c2 = madd(xb, v128.load(bb), c2); c3 = madd(xb, v128.load(bb, 16), c3);
    c4 = madd(xc, v128.load(bc), c4); c5 = madd(xc, v128.load(bc, 16), c5);
    x += 4; ba += 32; bb += 32; bc += 32;
  }
  v128.store(oa, c0); v128.store(oa, c1, 16); v128.store(ob, c2); v128.store(ob, c3, 16); v128.store(oc, c4); v128.store(oc, c5, 16);
}

/** One panel over kc of k (x: A from the block's first k): its sums from `s` to `o`. */
function onePanel(x: usize, kc: i32, bp: usize, s: usize, o: usize): void {
  let c0 = v128.load(s), c1 = v128.load(s, 16);
  const end = x + (<usize>kc << 2);
  while (x < end) {
    const xv = v128.load32_splat(x);
    c0 = madd(xv, v128.load(bp), c0); c1 = madd(xv, v128.load(bp, 16), c1);
    x += 4; bp += 32;
  }
  v128.store(o, c0); v128.store(o, c1, 16);
}

/**
 * Panels [p0, p1) over k from kFrom (a k block's start) to k: three neighbouring panels (24 columns, six accumulators)
 * at a time over every block, then one at a time. What `skewedBlocks` leaves: fewer than three full blocks and a partial.
 */
function panelGroups(kFrom: i32, k: i32, p0: i32, p1: i32): void {
  let p = p0;
  for (; p + 3 <= p1; p += 3) {
    const s0 = mvStart(p, kFrom), s1 = mvStart(p + 1, kFrom), s2 = mvStart(p + 2, kFrom);
    let c0 = v128.load(s0), c1 = v128.load(s0, 16), c2 = v128.load(s1), c3 = v128.load(s1, 16), c4 = v128.load(s2), c5 = v128.load(s2, 16);
    for (let k0 = kFrom; k0 < k; k0 += KC) {
      const kc = min(KC, k - k0);
      const ps = <usize>kc << 5; // bytes from one panel to the next
      let bp = mvPanel(p, k0, kc);
      let x = mvA + (<usize>k0 << 2);
      const end = x + (<usize>kc << 2);
      while (x < end) {
        const xv = v128.load32_splat(x);
        const b1 = bp + ps;
        const b2 = b1 + ps;
        c0 = madd(xv, v128.load(bp), c0); c1 = madd(xv, v128.load(bp, 16), c1);
        c2 = madd(xv, v128.load(b1), c2); c3 = madd(xv, v128.load(b1, 16), c3);
        c4 = madd(xv, v128.load(b2), c4); c5 = madd(xv, v128.load(b2, 16), c5);
        x += 4; bp += 32;
      }
    }
    const o0 = mvOut(p), o1 = mvOut(p + 1), o2 = mvOut(p + 2);
    v128.store(o0, c0); v128.store(o0, c1, 16); v128.store(o1, c2); v128.store(o1, c3, 16); v128.store(o2, c4); v128.store(o2, c5, 16);
  }
  for (; p < p1; p++) {
    for (let k0 = kFrom; k0 < k; k0 += KC) {
      const kc = min(KC, k - k0);
      onePanel(mvA + (<usize>k0 << 2), kc, mvPanel(p, k0, kc), mvStart(p, k0), mvOut(p));
    }
  }
}

/**
 * One call of the matmul family, written by the host (src/kernels/matmul-params.ts, MATMUL_FIELDS in this order, 4
 * bytes a field), each call of a threaded job its own: C[m, n] (+ bias) = A[m, k] · B[k, n]. A's rows `lda` elements
 * apart; B at `b` with strides brs, bcs (or, for the packed forms, its panels at `b`); C's rows `ldc` apart; bias [n]
 * with its stride (0: none); the call's scratch; and for matvecPackedColumns its columns [j0, j1).
 */
@unmanaged export class MatmulParams {
  m: i32; n: i32; k: i32;
  a: usize; lda: i32;
  b: usize; brs: i32; bcs: i32;
  c: usize; ldc: i32;
  bias: usize; biasStride: i32;
  scratch: usize; j0: i32; j1: i32;
}

/** C = A · B (+ bias) with B packed here (matmulImpl). */
export function matmul(p: MatmulParams): void {
  matmulImpl(p.m, p.n, p.k, p.a, p.lda, p.b, p.brs, p.bcs, p.c, p.ldc, p.bias, p.biasStride, p.scratch);
}

/** `matmul` with B from packMatmulB (its panels at p.b): the same numbers bit for bit. */
export function matmulPacked(p: MatmulParams): void {
  matmulPackedImpl(p.m, p.n, p.k, p.a, p.lda, p.b, p.c, p.ldc, p.bias, p.biasStride, p.scratch);
}

/** Columns [p.j0, p.j1) of matmulPacked for fewer than matvecRows() rows: one thread's share. */
export function matvecPackedColumns(p: MatmulParams): void {
  matvecPackedColumnsImpl(p.m, p.n, p.k, p.a, p.lda, p.b, p.c, p.ldc, p.bias, p.biasStride, p.scratch, p.j0, p.j1);
}

/** `matmul` that skips zero weights (weighted-sum over a value head holding NaN or ±∞; no scratch). */
export function matmulSkipZero(p: MatmulParams): void {
  matmulSkipZeroImpl(p.m, p.n, p.k, p.a, p.lda, p.b, p.brs, p.bcs, p.c, p.ldc);
}
