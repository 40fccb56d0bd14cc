import { contiguousStrides, sizeOf, type Shape } from "@attngraph/tensor";
import type { Arena } from "@attngraph/graph";
import { WasmValue, type WasmBlock } from "./value.js";

/** What an arena needs from its executor. */
export interface ArenaHost {
  newBlock(bytes: number, subject: string): WasmBlock;
  revive(block: WasmBlock, subject: string): void;
  free(block: WasmBlock): void;
  copy(src: WasmValue, dst: WasmValue): void;
}

/**
 * One block of wasm memory that planned values are views into; the runtime pools arenas (one per run in flight), so
 * steady-state runs allocate nothing. After a trap replaced the memory, the next `view` re-allocates the block there.
 */
export class WasmArena implements Arena<WasmValue> {
  readonly #host: ArenaHost;
  readonly block: WasmBlock;

  constructor(host: ArenaHost, elements: number) {
    this.#host = host;
    this.block = host.newBlock(elements * 4, `arena of ${elements} float32`);
  }

  view(offset: number, shape: Shape): WasmValue {
    this.#host.revive(this.block, `arena of ${this.block.bytes / 4} float32`);
    if (offset < 0 || (offset + sizeOf(shape)) * 4 > this.block.bytes) {
      throw new RangeError(
        `wasm arena: view [${shape.join(", ")}] at ${offset} does not fit ${this.block.bytes / 4} elements`,
      );
    }
    return new WasmValue(this.block, shape, contiguousStrides(shape), offset);
  }

  holds(value: WasmValue): boolean {
    return value instanceof WasmValue && value.block === this.block;
  }

  copy(src: WasmValue, dst: WasmValue): WasmValue {
    this.#host.copy(src, dst);
    return dst;
  }

  dispose(): void {
    this.#host.free(this.block);
  }
}
