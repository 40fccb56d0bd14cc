// weighted-sum: attention weights · V per batch and head. v is usually a transposed view ([B, S, Hkv, D] permuted to
// [B, Hkv, S, D]); the matmul core packs it into its reused scratch panels, no tensor copy.
// A weight of exactly 0 (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row
// (FlashAttention semantics, as the fused kernel). The matmul would compute 0 · NaN = NaN, so a value head holding a
// non-finite number takes a plain loop that skips zero weights instead; the check reads V once (S · D per value head,
// against L · S · D for the product), and the matmul itself stays as it is for everyone.
// With a signal, a big call works in chunks of query rows (chunks.ts).
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
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
  const nhkv = v.shape[1]!;
  const nd = v.shape[3]!;
  const [ws0, ws1, ws2, ws3] = weights.strides as [number, number, number, number];
  const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
  const group = nhkv === 0 ? 1 : nh / nhkv; // query heads per value head
  const y = out ?? new Float32Array(nb * nh * nl * nd);
  const r0 = rows?.start ?? 0;
  const r1 = rows?.end ?? nb * nh * nl;
  let checked = -1; // the (batch, value head) `finite` was computed for (heads run in order, so it only grows)
  let finite = true;
  // Each (batch, head) whose rows meet [r0, r1): its rows [i0, i1) of L.
  for (let bh = Math.floor(r0 / Math.max(1, nl)); bh * nl < r1; bh++) {
    const b = Math.floor(bh / nh);
    const h = bh - b * nh;
    const i0 = Math.max(0, r0 - bh * nl);
    const i1 = Math.min(nl, r1 - bh * nl);
    const vh = Math.floor(h / group);
    const wh = {
      data: weights.data,
      offset: weights.offset + b * ws0 + h * ws1 + i0 * ws2,
      rowStride: ws2,
      colStride: ws3,
    }; // [L, S]
    const vv = { data: v.data, offset: v.offset + b * vs0 + vh * vs1, rowStride: vs2, colStride: vs3 }; // [S, D]
    if (b * nhkv + vh !== checked) {
      finite = allFinite(vv, ns, nd);
      checked = b * nhkv + vh;
    }
    if (finite) matmul(i1 - i0, nd, ns, wh, vv, y, (bh * nl + i0) * nd, nd);
    else skipZeroProduct(i1 - i0, nd, ns, wh, vv, y, (bh * nl + i0) * nd);
  }
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
export const weightedSumKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const w = requireInput(call, 0, "weights");
  const v = requireInput(call, 1, "v");
  const [nb, nh, nl, ns] = w.shape as [number, number, number, number];
  const nd = v.shape[3]!;
  const shape = [nb, nh, nl, nd];
  const y = outData(call, shape) ?? new Float32Array(nb * nh * nl * nd);
  const pending = overRows(call, chunkWork, nb * nh * nl, ns * nd, (start, end) =>
    weightedSumImpl(w, v, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, shape));
});
