// Values of the wasm executor live in the module's memory. A value is a strided view (shape, strides, offset in
// elements of 4 bytes) onto a block; views (reshape, transpose, slice) share their source's block and count as
// references, so the block is freed when the last one is released. Typed-array views of the memory are never kept in a
// value: a memory.grow detaches them. A value is float32 (every kernel output) or int32 (uploaded token ids and
// targets): the same 4 bytes per element, so strides and addresses mean the same for both; the dtype says how the
// bits are read, and kernels refuse a value of the wrong one.
import { contiguousStrides, isRowMajor, sizeOf, type AnyTensor, type DType, type Shape } from "@attngraph/tensor";

export interface WasmBlock {
  /** Byte address in the memory of generation `gen`. */
  ptr: number;
  readonly bytes: number;
  /** Values (not yet released) that view this block. */
  refs: number;
  /** The module instance generation the block belongs to; after a trap the memory is replaced and `gen` moves on. */
  gen: number;
  /**
   * For uploads: the host tensor the block holds, so it can be restored in a new memory after a trap (no copy kept).
   * Cleared when a kernel writes into the block in place (kv-append's cache): the host tensor is no longer its contents.
   */
  source: AnyTensor | undefined;
  /** An upload a kernel wrote into in place since (its source was cleared then): said so if a trap loses it. */
  writtenInPlace?: true;
  /** An arena's block belongs to the arena: releasing the values in it does nothing. */
  readonly arena: boolean;
  freed: boolean;
}

export class WasmValue {
  released = false;

  constructor(
    readonly block: WasmBlock,
    readonly shape: Shape,
    /** In elements, one per dim. */
    readonly strides: readonly number[] = contiguousStrides(shape),
    /** Element index of [0, 0, …] from the block's start. */
    readonly offset = 0,
    /** How the elements' bits are read: "float32" (every kernel output) or "int32" (uploaded ids and targets). */
    readonly dtype: DType = "float32",
  ) {}

  get size(): number {
    return sizeOf(this.shape);
  }

  get rank(): number {
    return this.shape.length;
  }

  /** Row-major and dense (size-1 dims may have any stride). */
  get dense(): boolean {
    return isRowMajor(this);
  }

  /** Byte address of element [0, 0, …]. */
  get address(): number {
    return this.block.ptr + this.offset * 4;
  }

  /** The lowest and highest element index (from the block's start) the view reaches; [offset, offset - 1] when empty. */
  span(): readonly [number, number] {
    if (this.size === 0) return [this.offset, this.offset - 1];
    let lo = this.offset;
    let hi = this.offset;
    for (let i = 0; i < this.shape.length; i++) {
      const reach = (this.shape[i]! - 1) * this.strides[i]!;
      if (reach < 0) lo += reach;
      else hi += reach;
    }
    return [lo, hi];
  }
}

export function isWasmValue(v: unknown): v is WasmValue {
  return v instanceof WasmValue;
}
