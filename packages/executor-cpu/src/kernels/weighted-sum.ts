// weighted-sum: attention weights · V per batch and head. v is usually a transposed view ([B, S, Hkv, D] permuted to
// [B, Hkv, S, D]); the matmul core packs it into its reused scratch panels, no tensor copy.
// A weight of exactly 0 (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row
// (FlashAttention semantics, as the fused kernel). The matmul would compute 0 · NaN = NaN, so a value head holding a
// non-finite number takes a plain loop that skips zero weights instead; the check reads V once (S · D per value head,
// against L · S · D for the product), and the matmul itself stays as it is for everyone.
// With a signal, a big call works in chunks of query rows (chunks.ts).
import { forEachHeadBlock, headProductKernel } from "./head-blocks.js";
import { ensure64, matmul, type MatOperand } from "./matmul.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * context[b, h, l, d] = Σ_s weights[b, h, l, s] · v[b, h / (H / Hkv), s, d], float64 accumulation: one blocked matmul
 * per batch and head. Value heads are shared across query heads like keys in `scoreImpl` (indexed, never repeated).
 * A term whose weight is exactly 0 is skipped, so a non-finite value row reaches only the queries that weigh it.
 * Shapes are not checked here (the op's shape rule is, before dispatch).
 * @param weights [B, H, L, S], any strides
 * @param v [B, Hkv, S, D], any strides; Hkv divides H
 * @param out where to write [B, H, L, D] row-major; default: a new array
 * @param rows the rows of [B · H · L] to compute (each on its own, as in the whole call); default: all
 * @returns [B, H, L, D], row-major (`out` when given)
 */
export function weightedSumImpl(
  weights: StridedView,
  v: StridedView,
  out?: Float32Array,
  rows?: RowRange,
): Float32Array {
  const [nb, nh, nl, ns] = weights.shape as readonly number[] as [number, number, number, number];
  const nd = v.shape[3]!;
  const y = out ?? new Float32Array(nb * nh * nl * nd);
  const [ws2, ws3] = [weights.strides[2]!, weights.strides[3]!];
  const [vs2, vs3] = [v.strides[2]!, v.strides[3]!];
  let checked = -1; // the value head (its offset) `finite` was computed for: heads sharing one run in a row
  let finite = true;
  forEachHeadBlock(weights, v, rows, (wOffset, vOffset, m, row) => {
    const wh = { data: weights.data, offset: wOffset, rowStride: ws2, colStride: ws3 }; // [L, S]
    const vv = { data: v.data, offset: vOffset, rowStride: vs2, colStride: vs3 }; // [S, D]
    if (vOffset !== checked) {
      finite = allFinite(vv, ns, nd);
      checked = vOffset;
    }
    if (finite) matmul(m, nd, ns, wh, vv, y, row * nd, nd);
    else skipZeroProduct(m, nd, ns, wh, vv, y, row * nd);
  });
  return y;
}

/** Whether every element of the [rows, cols] operand is finite (x · 0 is NaN exactly for NaN and ±∞). */
function allFinite(m: MatOperand, rows: number, cols: number): boolean {
  const { data, rowStride, colStride } = m;
  let z = 0;
  for (let i = 0, r = m.offset; i < rows; i++, r += rowStride)
    for (let j = 0, p = r; j < cols; j++, p += colStride) z += data[p]! * 0;
  return z === 0;
}

let rowAcc: Float64Array = new Float64Array(0);

/**
 * y[yOff + i · n + j] = Σ_k a[i, k] · b[k, j] over the k with a[i, k] ≠ 0, in float64 in the order k = 0, 1, …: the
 * matmul's numbers for finite values (a skipped term would add ±0), without 0 · NaN.
 */
function skipZeroProduct(
  m: number,
  n: number,
  k: number,
  a: MatOperand,
  b: MatOperand,
  y: Float32Array,
  yOff: number,
): void {
  const acc = (rowAcc = ensure64(rowAcc, n));
  for (let i = 0; i < m; i++) {
    acc.fill(0, 0, n);
    for (
      let kk = 0, ap = a.offset + i * a.rowStride, bp = b.offset;
      kk < k;
      kk++, ap += a.colStride, bp += b.rowStride
    ) {
      const w = a.data[ap]!;
      if (w === 0) continue;
      for (let j = 0, q = bp; j < n; j++, q += b.colStride) acc[j] = acc[j]! + w * b.data[q]!;
    }
    for (let j = 0; j < n; j++) y[yOff + i * n + j] = acc[j]!;
  }
}

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel = headProductKernel(["weights", "v"], 3, weightedSumImpl);
