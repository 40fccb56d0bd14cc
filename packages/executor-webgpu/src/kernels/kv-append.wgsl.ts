// kv-append: the key/value cache of a decode session. Writes this call's x [B, Hkv, L, D] into positions
// [past, past + L) of the cache [B, Hkv, M, D] in place and returns the view of positions [0, past + L) (the cache's
// own buffer and strides, no copy of the prefix). The cache is session state (a weight uploaded once and passed again
// to every run), so the write lands in its own buffer, where the next run reads it.
// How: when both sides hold each (b, h)'s L·D elements back to back (a dense cache, and x dense in its last two dims,
// as a decode step's single position always is), one copyBufferToBuffer per (b, h); otherwise (a prefill's x with its
// heads split from [B, L, H, D]) one scatter program. Either is submitted to the device queue during this dispatch, and
// dispatches submit in call order, so the write lands after every earlier op's work and before any later op reads it.
// With `shift` (a sliding window's full cache, rarely), the positions that stay first go to a temporary and back to the
// cache's front: two copies, since one program may not read and write the same buffer.
import { checkKvAppendApart, dtypeError } from "@attngraph/graph";
import { isRowMajor } from "@attngraph/tensor";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { input, type Call } from "./inputs.js";
import { copyProgram } from "./copy.wgsl.js";

/** Inputs: cache [B, Hkv, M, D], x [B, Hkv, L, D]; attrs { past, shift (bound to integers by the runtime) } → [B, Hkv, past + L, D]. */
export const kvAppendKernel: WebGpuKernel = async (call, gpu) => {
  const cache = input(call, 0);
  const x = input(call, 1);
  const { past, shift } = checkKvAppendHere(call, cache, x);
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  if (shift > 0 && past > 0) {
    const kept = gpu.view(cache, [nb, nh, past, nd], cache.strides, cache.offset + shift * cache.strides[2]!);
    const tmp = gpu.alloc([nb, nh, past, nd]);
    await gpu.run(copyProgram(kept, tmp));
    await gpu.run(copyProgram(tmp, cache, { strides: cache.strides, offset: cache.offset }));
    gpu.release(tmp);
    gpu.release(kept); // a view holds a reference to the cache's storage
  }
  if (x.size > 0) {
    if (blocksOf(x) && blocksOf(cache)) copyBlocks(call, gpu, cache, x, past);
    else await gpu.run(scatterProgram(cache, x, past));
  }
  // The upload's host tensor no longer holds the buffer's contents: `hostValues` must read the buffer back, and after a
  // device loss the cache is an error ("device-lost") rather than re-uploaded as it was before this write.
  cache.storage.host = undefined;
  return gpu.view(cache, [nb, nh, past + nl, nd], cache.strides, cache.offset);
};

/**
 * The shared checks (they also hold what the declaration leaves to kernels: past and shift bound to integers, a cache
 * whose elements do not share memory), plus what only this executor needs: float32 values (kv-append is declared a
 * view op, so checkCall passes any dtype), and x not in the cache's buffer (WebGPU refuses a copy or a dispatch that
 * reads and writes one buffer).
 */
function checkKvAppendHere(call: Call, cache: GpuTensor, x: GpuTensor): { past: number; shift: number } {
  for (const [slot, name, t] of [
    [0, "cache", cache],
    [1, "x", x],
  ] as const) {
    if (t.dtype !== "float32") throw dtypeError(call, slot, name, "float32", t.dtype);
  }
  return checkKvAppendApart(call, cache, x, x.storage === cache.storage);
}

/** Whether each (b, h) of `t` is one run of L·D adjacent elements: its last two dims dense row-major. */
function blocksOf(t: GpuTensor): boolean {
  return isRowMajor({ shape: t.shape.slice(2), strides: t.strides.slice(2) });
}

/** One copyBufferToBuffer per (b, h): x's block of L·D elements to the cache's at position `past`. */
function copyBlocks(call: Call, gpu: KernelContext, cache: GpuTensor, x: GpuTensor, past: number): void {
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  const [cb, ch, cl] = cache.strides as [number, number, number, number];
  const [xb, xh] = x.strides as [number, number, number, number];
  const encoder = gpu.device.createCommandEncoder({ label: `${call.node} (kv-append)` });
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      const from = x.offset + b * xb + h * xh;
      const to = cache.offset + b * cb + h * ch + past * cl;
      encoder.copyBufferToBuffer(x.storage.buffer, from * 4, cache.storage.buffer, to * 4, nl * nd * 4);
    }
  }
  gpu.device.queue.submit([encoder.finish()]);
}

/** cache[b, h, past + l, d] = x[b, h, l, d] for any strides: a copy into x's shape on the cache's strides, from `past`. */
function scatterProgram(cache: GpuTensor, x: GpuTensor, past: number): ProgramInfo {
  return copyProgram(x, cache, { strides: cache.strides, offset: cache.offset + past * cache.strides[2]! });
}
