// Buffer pooling. Runs repeat the same shapes, so a released buffer of one size class serves the next request of that
// class; reuse is safe without waiting for the GPU because queue operations (writeBuffer, submit) execute in order.
// Usage flags are numbers here, not GPUBufferUsage: Node has no such global unless the webgpu package's globals are
// installed, and this package never touches globalThis.

export const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;
export const MAP_READ_MODE = 0x1;

/** Storage buffers: read and written by kernels, filled by uploads, copied out for readback. */
export const STORAGE_USAGE = USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST;
export const UNIFORM_USAGE = USAGE.UNIFORM | USAGE.COPY_DST;
export const READBACK_USAGE = USAGE.MAP_READ | USAGE.COPY_DST;

/** Size classes: powers of two from 256 bytes, so a slightly different shape still finds a buffer. */
export function sizeClass(bytes: number): number {
  let c = 256;
  while (c < bytes) c *= 2;
  return c;
}

export class BufferPool {
  readonly #free = new Map<string, GPUBuffer[]>();
  readonly #all = new Set<GPUBuffer>();
  created = 0;
  /** Buffers handed out and not given back: what a leak of values (not of pooled memory) grows. */
  inUse = 0;

  constructor(readonly device: GPUDevice) {}

  acquire(bytes: number, usage: number, label?: string): GPUBuffer {
    const size = sizeClass(bytes);
    const list = this.#free.get(`${usage}:${size}`);
    const reused = list?.pop();
    this.inUse++;
    if (reused) return reused;
    this.created++;
    const b = this.device.createBuffer({ size, usage, ...(label === undefined ? {} : { label }) });
    this.#all.add(b);
    return b;
  }

  give(buffer: GPUBuffer): void {
    if (!this.#all.has(buffer)) return;
    this.inUse--;
    const key = `${buffer.usage}:${buffer.size}`;
    let list = this.#free.get(key);
    if (!list) this.#free.set(key, (list = []));
    list.push(buffer);
  }

  /** Destroys every buffer this pool ever made (pooled or still in use). */
  destroy(): void {
    for (const b of this.#all) b.destroy();
    this.#all.clear();
    this.#free.clear();
    this.inUse = 0;
  }
}
