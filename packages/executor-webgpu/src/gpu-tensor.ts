// The value this executor hands the runtime: a strided view (shape, strides, offset in elements) onto a GPU buffer.
// Views share one `GpuStorage`; each GpuTensor object holds one reference to it, given back by `release`.
import { sizeOf, type Shape, type Tensor } from "@attngraph/tensor";

/** One GPU buffer and who holds it. */
export interface GpuStorage {
  buffer: GPUBuffer;
  /** The device the buffer lives on; a value from a lost device is stale (see `WebGpuExecutor`). */
  device: GPUDevice;
  /** Usable bytes (the pooled buffer may be larger). */
  readonly bytes: number;
  /** Live GpuTensor objects on this storage. */
  refs: number;
  /** The host tensor an upload came from: lets the executor re-upload after a device loss and check values on the host. */
  host: Tensor | undefined;
}

export class GpuTensor {
  #released = false;

  constructor(
    readonly storage: GpuStorage,
    readonly shape: Shape,
    readonly strides: readonly number[],
    readonly offset: number,
  ) {
    storage.refs++;
  }

  get size(): number {
    return sizeOf(this.shape);
  }

  get rank(): number {
    return this.shape.length;
  }

  /** Dense row-major from `offset` (size-1 dims may have any stride). */
  get isContiguous(): boolean {
    let expected = 1;
    for (let i = this.shape.length - 1; i >= 0; i--) {
      if (this.shape[i] !== 1 && this.strides[i] !== expected) return false;
      expected *= this.shape[i]!;
    }
    return true;
  }

  /** Drops this object's reference; true when it was the last one (the buffer can be reused). Idempotent. */
  drop(): boolean {
    if (this.#released) return false;
    this.#released = true;
    return --this.storage.refs === 0;
  }

  get released(): boolean {
    return this.#released;
  }
}

export function isGpuTensor(v: unknown): v is GpuTensor {
  return v instanceof GpuTensor;
}
