// The per-device cache behind KernelContext.constants: small read-only buffers (slopes, rotary tables) made once per
// key and kept for the MAX_CONSTANTS last used, so that tables that change with every call do not pile up on the device.
import { STORAGE_USAGE } from "./buffers.js";

/** Constant buffers kept per device (least recently used evicted first). */
const MAX_CONSTANTS = 256;

/** The buffer cached under `key` on device `s` (made from `make()` on a miss), marked as the most recently used. */
export function constantBuffer(
  s: { readonly device: GPUDevice; readonly constants: Map<string, GPUBuffer> },
  key: string,
  make: () => Float32Array,
): GPUBuffer {
  let b = s.constants.get(key);
  if (b) {
    // Most recently used last: the eviction below takes the oldest.
    s.constants.delete(key);
    s.constants.set(key, b);
    return b;
  }
  const data = make();
  b = s.device.createBuffer({ size: Math.max(16, data.byteLength), usage: STORAGE_USAGE, label: key });
  s.device.queue.writeBuffer(b, 0, data);
  s.constants.set(key, b);
  // Bounded: a decode session's RoPE table changes with every position. Work already submitted that reads an
  // evicted buffer still completes (destroy() waits for the queue).
  if (s.constants.size > MAX_CONSTANTS) {
    const [oldest, buffer] = s.constants.entries().next().value!;
    s.constants.delete(oldest);
    buffer.destroy();
  }
  return b;
}
