// kv-append: the key/value cache of a decode session. Writes this call's x [B, Hkv, L, D] into positions
// [past, past + L) of the cache [B, Hkv, M, D] in place and returns the view of positions [0, past + L) (the cache's
// own strides, no copy of the prefix). The cache is session state (a weight uploaded once and passed again to every
// run), so the write must land in its own block: the next run reads it there. A call costs B·Hkv·L row copies of D
// elements; the prefix is never touched again.
import { checkKvAppendApart } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import type { WasmValue } from "../value.js";
import { requireInput } from "./adapter.js";

/** Inputs: cache [B, Hkv, M, D], x [B, Hkv, L, D]; attrs { past, shift (bound to integers by the runtime) } → [B, Hkv, past + L, D]. */
export const kvAppendKernel: WasmKernel = (call, ctx) => {
  const cache = requireInput(call, 0, "cache");
  const x = requireInput(call, 1, "x");
  const { past, shift } = checkKvAppendApart(call, cache, x, x.block === cache.block);
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  const heap = ctx.i32();
  const at = (v: WasmValue, position: number) => ({
    base: v.address / 4 + position * v.strides[2]!,
    strides: v.strides,
  });
  // A window's full cache first drops its oldest positions: [shift, shift + past) moves to the front.
  if (shift > 0) copyRows(heap, at(cache, 0), at(cache, shift), [nb, nh, past, nd]);
  copyRows(heap, at(cache, past), at(x, 0), [nb, nh, nl, nd]);
  ctx.wroteInto(cache);
  return ctx.view(cache, [nb, nh, past + nl, nd], cache.strides, cache.offset);
};

interface HeapView {
  /** Index of element [0, 0, 0, 0] in the heap's int32 view. */
  readonly base: number;
  readonly strides: readonly number[];
}

/**
 * dst[b, h, l, :] = src[b, h, l, :] for every (b, h, l) of `shape`, rows in ascending order (so moving rows to lower
 * positions of the same cache is safe). Rows whose elements are adjacent on both sides move with one copyWithin (a
 * memmove of the heap's bytes); otherwise element by element through the int32 view, so the bits move unchanged either
 * way (a float view may canonicalise NaN payloads). Nothing is allocated here, so the heap view stays valid throughout.
 */
function copyRows(
  heap: Int32Array,
  dst: HeapView,
  src: HeapView,
  shape: readonly [number, number, number, number],
): void {
  const [nb, nh, nl, nd] = shape;
  const [db, dh, dl, dd] = dst.strides as [number, number, number, number];
  const [sb, sh, sl, sd] = src.strides as [number, number, number, number];
  const rows = nd === 1 || (dd === 1 && sd === 1);
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      for (let l = 0; l < nl; l++) {
        const to = dst.base + b * db + h * dh + l * dl;
        const from = src.base + b * sb + h * sh + l * sl;
        if (rows) heap.copyWithin(to, from, from + nd);
        else for (let d = 0; d < nd; d++) heap[to + d * dd] = heap[from + d * sd]!;
      }
    }
  }
}
