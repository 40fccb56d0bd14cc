// kv-append: the key/value cache of a decode session. Writes this call's x [B, Hkv, L, D] into positions
// [past, past + L) of the cache [B, Hkv, M, D] in place and returns the view of positions [0, past + L). The cache is
// session state (a weight the runtime keeps); only these L positions of it are written, so a call costs O(B·Hkv·L·D),
// never the prefix again. With `shift` (a sliding window's full cache), positions [shift, shift + past) first move to
// the front: rarely, and O(past) when they do.
import { checkKvAppendApart } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { requireInput, toTensor } from "./adapter.js";
import { sliceImpl } from "./slice.js";
import type { StridedView } from "./strided.js";

/**
 * Moves cache[:, :, shift:shift+past, :] to cache[:, :, 0:past, :], then copies x into cache[:, :, past:past+L, :]
 * (any strides on both) and returns the view cache[:, :, 0:past+L, :].
 */
export function kvAppendImpl(cache: StridedView, x: StridedView, past: number, shift = 0): StridedView {
  const [B, H, L, D] = x.shape as [number, number, number, number];
  const [cb, ch, cl, cd] = cache.strides as [number, number, number, number];
  const [xb, xh, xl, xd] = x.strides as [number, number, number, number];
  const c = cache.data;
  const v = x.data;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      // Front to back: a row moves to a lower position, so no row is overwritten before it has moved.
      if (shift > 0) {
        for (let l = 0; l < past; l++) {
          const to = cache.offset + b * cb + h * ch + l * cl;
          const from = to + shift * cl;
          for (let d = 0; d < D; d++) c[to + d * cd] = c[from + d * cd]!;
        }
      }
      for (let l = 0; l < L; l++) {
        const to = cache.offset + b * cb + h * ch + (past + l) * cl;
        const from = x.offset + b * xb + h * xh + l * xl;
        for (let d = 0; d < D; d++) c[to + d * cd] = v[from + d * xd]!;
      }
    }
  }
  return sliceImpl(cache, 2, 0, past + L);
}

/** Inputs: cache [B, Hkv, M, D], x [B, Hkv, L, D]; attrs { past, shift (bound to integers by the runtime) } → [B, Hkv, past + L, D]. */
export const kvAppendKernel: CpuKernel = (call) => {
  const cache = requireInput(call, 0, "cache");
  const x = requireInput(call, 1, "x");
  const { past, shift } = checkKvAppendApart(call, cache, x, x.data === cache.data);
  return toTensor(kvAppendImpl(cache, x, past, shift));
};
