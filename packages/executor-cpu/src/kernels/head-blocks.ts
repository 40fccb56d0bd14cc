// The per-(batch, head) walk of score and weighted-sum, and the adapter they share: each is one matmul per batch and
// query head over the query rows of [B · H · L] that a call (or a chunk) asks for, reading the key or value head that
// H / Hkv query heads share (grouped-query attention: indexed, never repeated).
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import type { ChunkedCpuKernel } from "../executor.js";
import { outData, requireInput, result } from "./adapter.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * Calls `block` once per (batch, query head) whose rows of [B · H · L] meet `rows` (default: all), in order. A matmul
 * per block dwarfs the call.
 * @param x [B, H, L, ·] (q or the weights), any strides
 * @param kv [B, Hkv, ·, ·] (k or v), any strides; Hkv divides H
 * @param block gets the `data` index of the block's first query row in x (its rows i0 ≤ i < i1 of L), that of the
 *   shared head of kv, the row count i1 − i0, and the block's first row in [B · H · L] (its first output row)
 */
export function forEachHeadBlock(
  x: StridedView,
  kv: StridedView,
  rows: RowRange | undefined,
  block: (xOffset: number, kvOffset: number, m: number, row: number) => void,
): void {
  const [nb, nh, nl] = x.shape as readonly number[] as [number, number, number];
  const nhkv = kv.shape[1]!;
  const [xs0, xs1, xs2] = x.strides as [number, number, number];
  const [ks0, ks1] = kv.strides as [number, number];
  const group = nhkv === 0 ? 1 : nh / nhkv; // query heads per key/value head
  const r0 = rows?.start ?? 0;
  const r1 = rows?.end ?? nb * nh * nl;
  // Each (batch, head) whose rows meet [r0, r1): its rows [i0, i1) of L.
  for (let bh = Math.floor(r0 / Math.max(1, nl)); bh * nl < r1; bh++) {
    const b = Math.floor(bh / nh);
    const h = bh - b * nh;
    const i0 = Math.max(0, r0 - bh * nl);
    const i1 = Math.min(nl, r1 - bh * nl);
    const kh = Math.floor(h / group);
    block(x.offset + b * xs0 + h * xs1 + i0 * xs2, kv.offset + b * ks0 + kh * ks1, i1 - i0, bh * nl + i0);
  }
}

/**
 * The kernel of a per-(batch, head) product. Inputs: x [B, H, L, K] (`names[0]`), kv [B, Hkv, ·, ·] (`names[1]`) →
 * [B, H, L, N] with N = kv's axis `nAxis`, in chunks of query rows (a row costs K · N multiply-adds).
 * @param impl writes rows `rows` of [B · H · L] into y ([B, H, L, N] row-major)
 */
export function headProductKernel(
  names: readonly [string, string],
  nAxis: number,
  impl: (x: StridedView, kv: StridedView, y: Float32Array, rows: RowRange) => unknown,
): ChunkedCpuKernel {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const x = requireInput(call, 0, names[0]);
    const kv = requireInput(call, 1, names[1]);
    const [nb, nh, nl, nk] = x.shape as [number, number, number, number];
    const nn = kv.shape[nAxis]!;
    const shape = [nb, nh, nl, nn];
    const y = outData(call, shape) ?? new Float32Array(nb * nh * nl * nn);
    const pending = overRows(call, chunkWork, nb * nh * nl, nk * nn, (start, end) => impl(x, kv, y, { start, end }));
    return afterwards(pending, () => result(call, y, shape));
  });
}
