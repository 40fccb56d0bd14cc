// kv-append: the key/value cache of a decode session. Writes this call's x [B, Hkv, L, D] into positions
// [past, past + L) of the cache [B, Hkv, M, D] in place and returns the view of positions [0, past + L) (the cache's
// own strides, no copy of the prefix). The cache is session state (a weight uploaded once and passed again to every
// run), so the write must land in its own block: the next run reads it there. A call costs B·Hkv·L row copies of D
// elements; the prefix is never touched again.
import { checkKvAppend, kernelInputError } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { requireInput, type Call } from "./adapter.js";

/** Inputs: cache [B, Hkv, M, D], x [B, Hkv, L, D]; attrs { past (bound to an integer by the runtime) } → [B, Hkv, past + L, D]. */
export const kvAppendKernel: WasmKernel = (call, ctx) => {
  const cache = requireInput(call, 0, "cache");
  const x = requireInput(call, 1, "x");
  const past = checkKvAppendHere(call, cache, x);
  writeRows(ctx, cache, x, past);
  ctx.wroteInto(cache);
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  return ctx.view(cache, [nb, nh, past + nl, nd], cache.strides, cache.offset);
};

/** The shared checks, plus: x read from the cache's own block could be overwritten before it is read. */
function checkKvAppendHere(call: Call, cache: WasmValue, x: WasmValue): number {
  const past = checkKvAppend(call, cache, x);
  if (x.block === cache.block) throw kernelInputError(call, "x", "x must not be a view of the cache it is written into", "a value of its own", "a view of the cache");
  return past;
}

/**
 * cache[b, h, past + l, :] = x[b, h, l, :] for every (b, h, l). Rows whose elements are adjacent on both sides move
 * with one copyWithin (a memmove of the heap's bytes); otherwise element by element through an int32 view, so the
 * bits move unchanged either way (a float view may canonicalise NaN payloads). Nothing is allocated here, so the
 * heap view stays valid throughout.
 */
function writeRows(ctx: WasmContext, cache: WasmValue, x: WasmValue, past: number): void {
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  const [cb, ch, cl, cd] = cache.strides as [number, number, number, number];
  const [xb, xh, xl, xd] = x.strides as [number, number, number, number];
  const heap = ctx.i32();
  const c0 = cache.address / 4;
  const x0 = x.address / 4;
  const rows = nd === 1 || (cd === 1 && xd === 1);
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      for (let l = 0; l < nl; l++) {
        const to = c0 + b * cb + h * ch + (past + l) * cl;
        const from = x0 + b * xb + h * xh + l * xl;
        if (rows) heap.copyWithin(to, from, from + nd);
        else for (let d = 0; d < nd; d++) heap[to + d * cd] = heap[from + d * xd]!;
      }
    }
  }
}


