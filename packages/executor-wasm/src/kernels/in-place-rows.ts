// The walk layer-norm, rms-norm and softmax make, written once: an op that may run in place, over the rows of its input
// x [..., n] (any view) along the last axis, into a dense result of x's shape (writeInPlaceChunked: through a temporary
// where writing the result would clobber x first). With a signal, a big call runs in chunks of rows (chunks.ts).
import { overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { writeInPlaceChunked, type Call } from "./adapter.js";

/**
 * Calls `part(dst, r0, r1)` for rows [r0, r1) of x into dst, over all rows (in chunks of `work` multiply-adds per
 * element); nothing for an empty x.
 */
export function inPlaceRows(
  call: Call,
  ctx: WasmContext,
  x: WasmValue,
  work: number,
  part: (dst: WasmValue, r0: number, r1: number) => void,
): WasmValue | Promise<WasmValue> {
  const n = x.shape[x.rank - 1]!;
  const rows = n === 0 ? 0 : x.size / n;
  return writeInPlaceChunked(call, ctx, x, (dst) => {
    if (dst.size === 0) return undefined;
    // The descriptor slots are shared: `part` writes them again for each chunk (another kernel may run in between).
    return overRows(call, ctx, rows, n * work, (r0, r1) => part(dst, r0, r1));
  });
}
