// matmul: the one matrix-product core behind projection, out-proj, score, weighted-sum and the fused attention blocks.
// GotoBLAS shape: both operands are packed into float64 panels of 4 lanes (k-major), and a 4×4 register tile of
// float64 locals runs over the shared dimension. Packing makes every input layout (transposed views, sliced QKV,
// GQA heads) read the same way, and converts float32 → float64 once instead of once per multiply.
//
// Accumulators: float64 locals, kept because they measured faster than Math.fround accumulators. With
// `npx tsc -b packages/executor-cpu && node packages/executor-cpu/bench/matmul.mjs` (Node 20.20, 2-core AMD EPYC VM
// shared with other work, single thread): 256³ 4.3 vs 2.8 GFLOP/s, 768×128×768 4.3 vs 2.8 GFLOP/s (the bench carries
// the fround copy of this tile). V8 runs each fround as a float64→float32 conversion; float64 sums are also closer to
// the float64 reference. The product of two float32 values is exact in float64, so the result is bit for bit a plain
// float64 dot-product loop's.
// Shape, from development experiments (not kept): 4×4 beat 2×4, 4×2, 3×4, 4×3, 2×8, 4×8 and 6×2 tiles; unrolling k did
// not help; cache blocking beyond the packed-B cap below changed nothing measurable (V8's scalar tile is compute-bound).
// The scratch panels are module-level and reused: one matmul call is synchronous (a kernel working in chunks calls it
// once per chunk, holding nothing in them across a yield), so no two calls ever share them at once.

/**
 * Rows and columns of the register tile; packed panels hold this many lanes. The loops below spell it as the literal 4:
 * V8 reloads a module-level constant on every use, which slowed the micro-kernel noticeably in development.
 */
export const TILE = 4;
/** A block of this many rows of A is packed at a time. */
const MC = 64;
/** Packed B is capped at this many float64s (2 MiB); wider B is done in column blocks. */
const B_BLOCK = 1 << 18;

/** A 2-D operand: element [i, j] is `data[offset + i * rowStride + j * colStride]` (any strides, negative included). */
export interface MatOperand {
  readonly data: Float32Array;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
}

/** A 1-D operand (a bias): element [j] is `data[offset + j * stride]`. */
export interface VecOperand {
  readonly data: Float32Array;
  readonly offset: number;
  readonly stride: number;
}

/** `buf` when it holds at least `n` float64s, else a new buffer (grown by half again, so repeated growth is rare). */
export function ensure64(buf: Float64Array, n: number): Float64Array {
  return buf.length >= n ? buf : new Float64Array(Math.max(n, Math.ceil(buf.length * 1.5)));
}

/**
 * Packs `lanes` vectors of length `depth` into panels of TILE lanes, depth-major: lane l, step p lands at
 * dst[dstOff + (⌊l / TILE⌋ · depth + p) · TILE + l % TILE]. The last panel is padded with zero lanes, so the micro-kernel
 * always runs full tiles. Element (l, p) is src[off + l · laneStride + p · depthStride].
 * Writes ⌈lanes / TILE⌉ · TILE · depth float64s.
 */
export function packPanels(
  src: Float32Array,
  off: number,
  laneStride: number,
  depthStride: number,
  lanes: number,
  depth: number,
  dst: Float64Array,
  dstOff: number,
): void {
  let o = dstOff;
  for (let l0 = 0; l0 < lanes; l0 += 4) {
    const p0 = off + l0 * laneStride;
    const n = Math.min(4, lanes - l0);
    if (n === 4) {
      const p1 = p0 + laneStride;
      const p2 = p1 + laneStride;
      const p3 = p2 + laneStride;
      for (let p = 0, q = 0; p < depth; p++, q += depthStride, o += 4) {
        dst[o] = src[p0 + q]!;
        dst[o + 1] = src[p1 + q]!;
        dst[o + 2] = src[p2 + q]!;
        dst[o + 3] = src[p3 + q]!;
      }
    } else {
      for (let p = 0, q = p0; p < depth; p++, q += depthStride, o += 4) {
        for (let r = 0; r < 4; r++) dst[o + r] = r < n ? src[q + r * laneStride]! : 0;
      }
    }
  }
}

/** The float32 output `tileKernel` is given when it stores into its float64 one (never written). */
const NO_FLOAT32 = new Float32Array(0);

/**
 * The register tile: c[co + r · ldc + j] = Σ_p ap[a + p · 4 + r] · bp[b + p · 4 + j] for r, j < 4, over kc steps of
 * two packed panels, in float64. Sixteen accumulators in locals; nothing allocated, no closures.
 */
export function microKernel(
  kc: number,
  ap: Float64Array,
  a: number,
  bp: Float64Array,
  b: number,
  c: Float64Array,
  co: number,
  ldc: number,
): void {
  tileKernel(kc, ap, a, bp, b, c, NO_FLOAT32, co, ldc, 0, 0, 0, 0);
}

/**
 * The tile's one loop, storing into `out64` as `microKernel` does, or (when `out32` is a real array) straight into a
 * float32 output with a bias per column (out32[co + r · ldc + j] = Σ + bj). The stores are two branches, one per array
 * type, taken once per tile: in development experiments, one store site fed both Float32Array and Float64Array
 * (polymorphic) was slower on small sizes, and going through a float64 tile plus a copy was slower at K = 64 (the score
 * shape).
 */
function tileKernel(
  kc: number,
  ap: Float64Array,
  a: number,
  bp: Float64Array,
  b: number,
  out64: Float64Array,
  out32: Float32Array,
  co: number,
  ldc: number,
  bias0: number,
  bias1: number,
  bias2: number,
  bias3: number,
): void {
  let c00 = 0,
    c01 = 0,
    c02 = 0,
    c03 = 0;
  let c10 = 0,
    c11 = 0,
    c12 = 0,
    c13 = 0;
  let c20 = 0,
    c21 = 0,
    c22 = 0,
    c23 = 0;
  let c30 = 0,
    c31 = 0,
    c32 = 0,
    c33 = 0;
  for (let p = 0; p < kc; p++, a += 4, b += 4) {
    const a0 = ap[a]!,
      a1 = ap[a + 1]!,
      a2 = ap[a + 2]!,
      a3 = ap[a + 3]!;
    const b0 = bp[b]!;
    c00 += a0 * b0;
    c10 += a1 * b0;
    c20 += a2 * b0;
    c30 += a3 * b0;
    const b1 = bp[b + 1]!;
    c01 += a0 * b1;
    c11 += a1 * b1;
    c21 += a2 * b1;
    c31 += a3 * b1;
    const b2 = bp[b + 2]!;
    c02 += a0 * b2;
    c12 += a1 * b2;
    c22 += a2 * b2;
    c32 += a3 * b2;
    const b3 = bp[b + 3]!;
    c03 += a0 * b3;
    c13 += a1 * b3;
    c23 += a2 * b3;
    c33 += a3 * b3;
  }
  if (out32 === NO_FLOAT32) {
    // No bias here, not even + 0: a −0 sum stays −0 in the float64 blocks of the attention kernels.
    out64[co] = c00;
    out64[co + 1] = c01;
    out64[co + 2] = c02;
    out64[co + 3] = c03;
    co += ldc;
    out64[co] = c10;
    out64[co + 1] = c11;
    out64[co + 2] = c12;
    out64[co + 3] = c13;
    co += ldc;
    out64[co] = c20;
    out64[co + 1] = c21;
    out64[co + 2] = c22;
    out64[co + 3] = c23;
    co += ldc;
    out64[co] = c30;
    out64[co + 1] = c31;
    out64[co + 2] = c32;
    out64[co + 3] = c33;
    return;
  }
  // The bias is added after the sum, as a plain loop `acc = Σ; acc += bias` would, so results match it bit for bit.
  out32[co] = c00 + bias0;
  out32[co + 1] = c01 + bias1;
  out32[co + 2] = c02 + bias2;
  out32[co + 3] = c03 + bias3;
  co += ldc;
  out32[co] = c10 + bias0;
  out32[co + 1] = c11 + bias1;
  out32[co + 2] = c12 + bias2;
  out32[co + 3] = c13 + bias3;
  co += ldc;
  out32[co] = c20 + bias0;
  out32[co + 1] = c21 + bias1;
  out32[co + 2] = c22 + bias2;
  out32[co + 3] = c23 + bias3;
  co += ldc;
  out32[co] = c30 + bias0;
  out32[co + 1] = c31 + bias1;
  out32[co + 2] = c32 + bias2;
  out32[co + 3] = c33 + bias3;
}

let aPack: Float64Array = new Float64Array(0);
let bPack: Float64Array = new Float64Array(0);
const tile = new Float64Array(16);

/**
 * C = A · B (+ bias over columns), accumulated in float64 in the order k = 0, 1, … (as a plain dot-product loop) and
 * rounded once to float32. A transposed operand is just swapped strides: x · Wᵀ with W [N, K] is
 * `b = { rowStride: wColStride, colStride: wRowStride }`.
 * @param a [M, K]
 * @param b [K, N]
 * @param c output: C[i, j] is written at c[cOff + i · cRowStride + j]; it must not overlap A, B or the bias
 * @param bias [N], or undefined
 */
export function matmul(
  m: number,
  n: number,
  k: number,
  a: MatOperand,
  b: MatOperand,
  c: Float32Array,
  cOff: number,
  cRowStride: number,
  bias?: VecOperand,
): void {
  if (m <= 0 || n <= 0) return;
  // Columns of B per block: as many as fit the packed-B cap, a multiple of TILE, at least one tile.
  const nc = Math.max(4, Math.min(roundUp(n), Math.floor(B_BLOCK / Math.max(k, 1)) & ~3));
  bPack = ensure64(bPack, nc * k);
  aPack = ensure64(aPack, MC * k);
  const ap = aPack;
  const bp = bPack;
  const bd = bias?.data;
  const bo = bias?.offset ?? 0;
  const bs = bias?.stride ?? 0;
  for (let jc = 0; jc < n; jc += nc) {
    const ncur = Math.min(nc, n - jc);
    // B's columns are the lanes: lane j steps by colStride, depth k by rowStride.
    packPanels(b.data, b.offset + jc * b.colStride, b.colStride, b.rowStride, ncur, k, bp, 0);
    for (let ic = 0; ic < m; ic += MC) {
      const mcur = Math.min(MC, m - ic);
      packPanels(a.data, a.offset + ic * a.rowStride, a.rowStride, a.colStride, mcur, k, ap, 0);
      for (let j0 = 0; j0 < ncur; j0 += 4) {
        const cols = Math.min(4, ncur - j0);
        const j = jc + j0;
        const b0 = bd === undefined ? 0 : bd[bo + j * bs]!;
        const b1 = bd === undefined || cols < 2 ? 0 : bd[bo + (j + 1) * bs]!;
        const b2 = bd === undefined || cols < 3 ? 0 : bd[bo + (j + 2) * bs]!;
        const b3 = bd === undefined || cols < 4 ? 0 : bd[bo + (j + 3) * bs]!;
        for (let i0 = 0; i0 < mcur; i0 += 4) {
          const rows = Math.min(4, mcur - i0);
          let p = cOff + (ic + i0) * cRowStride + j;
          if (rows === 4 && cols === 4) {
            tileKernel(k, ap, i0 * k, bp, j0 * k, tile, c, p, cRowStride, b0, b1, b2, b3);
          } else {
            // An edge tile: computed in full (the packed panels are zero-padded), only the real part stored.
            microKernel(k, ap, i0 * k, bp, j0 * k, tile, 0, 4);
            for (let r = 0; r < rows; r++, p += cRowStride) {
              const t = r * 4;
              c[p] = tile[t]! + b0;
              if (cols > 1) c[p + 1] = tile[t + 1]! + b1;
              if (cols > 2) c[p + 2] = tile[t + 2]! + b2;
              if (cols > 3) c[p + 3] = tile[t + 3]! + b3;
            }
          }
        }
      }
    }
  }
}

/** n rounded up to a multiple of TILE. */
export function roundUp(n: number): number {
  return (n + 3) & ~3;
}
