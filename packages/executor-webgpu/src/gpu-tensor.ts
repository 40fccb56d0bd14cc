// The value this executor hands the runtime: a strided view (shape, strides, offset in elements) onto a GPU buffer.
// Views share one `GpuStorage`; each GpuTensor object holds one reference to it, given back by `release`. The element
// type lives on the storage (a buffer holds one kind of element), so every view of int32 ids is int32 too.
import { isRowMajor, sizeOf, type AnyTensor, type DType, type Shape } from "@attngraph/tensor";

/** One GPU buffer and who holds it. */
export interface GpuStorage {
  buffer: GPUBuffer;
  /** The device the buffer lives on; a value from a lost device is stale (see `WebGpuExecutor`). */
  device: GPUDevice;
  /** Usable bytes (the pooled buffer may be larger). */
  readonly bytes: number;
  /** Live GpuTensor objects on this storage. */
  refs: number;
  /**
   * float32, or int32 for uploaded ids and targets (stored as i32, read as array<i32>, never through f32: a float load
   * may flush or canonicalise bit patterns that are denormals or NaNs as floats). Kernel results are float32.
   */
  readonly dtype: DType;
  /**
   * The host tensor an upload came from: lets the executor re-upload after a device loss and check values on the host.
   * Cleared when a kernel writes into the buffer in place (kv-append's cache): the tensor no longer holds its contents.
   */
  host: AnyTensor | undefined;
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

  get dtype(): DType {
    return this.storage.dtype;
  }

  get rank(): number {
    return this.shape.length;
  }

  /** Dense row-major from `offset` (size-1 dims may have any stride). */
  get isContiguous(): boolean {
    return isRowMajor(this);
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
