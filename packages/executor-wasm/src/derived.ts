// Layouts derived once from an uploaded value, kept beside it: a weight's matmul panels are packed at its first use
// and then read by every later call, instead of being packed again on each one (what onnxruntime calls prepacking).
// Only uploads qualify: kernels write their outputs only, so a layout derived from an upload stays true until the
// upload is freed, and it is freed with it. The one exception, kv-append writing a decode session's cache in place,
// drops the block's layouts and stops it counting as an upload (WasmContext.wroteInto). Anything else (an activation, an
// arena value) changes between runs and is packed per call as before.
import { AttnGraphError } from "@attngraph/tensor";
import type { WasmBlock } from "./value.js";

export interface DerivedHost {
  /** A new block of `bytes` in the current memory (throws a "memory-limit" AttnGraphError when it does not fit). */
  alloc(bytes: number, subject: string): WasmBlock;
  free(block: WasmBlock): void;
  /** The current module instance's generation: a block of another one is stale (the memory was replaced). */
  readonly generation: number;
}

export class DerivedLayouts {
  readonly #bySource = new Map<WasmBlock, Map<string, WasmBlock>>();
  readonly #host: DerivedHost;
  /** Layouts made (not found cached), for tests and profiling. */
  made = 0;

  constructor(host: DerivedHost) {
    this.#host = host;
  }

  /**
   * The address of the layout `key` of the upload `source` (`bytes` long, written by `fill(address)` the first time),
   * or undefined when `source` is not an upload or the layout does not fit under the memory limit: the caller then
   * works from `source` itself, as it would without this cache. `key` must name everything the layout depends on
   * besides the block's contents (the view's offset and strides, the shape).
   */
  get(
    source: WasmBlock,
    key: string,
    bytes: number,
    subject: string,
    fill: (address: number) => void,
  ): number | undefined {
    if (source.source === undefined || source.arena || source.freed) return undefined;
    let layouts = this.#bySource.get(source);
    const hit = layouts?.get(key);
    if (hit !== undefined && hit.gen === this.#host.generation && !hit.freed) return hit.ptr;
    let block: WasmBlock;
    try {
      block = this.#host.alloc(bytes, subject);
    } catch (e) {
      if (e instanceof AttnGraphError && e.code === "memory-limit") return undefined;
      throw e;
    }
    block.refs = 1;
    fill(block.ptr);
    if (layouts === undefined) this.#bySource.set(source, (layouts = new Map()));
    if (hit !== undefined) this.#host.free(hit); // stale (another memory): frees nothing there, marks it freed
    layouts.set(key, block);
    this.made++;
    return block.ptr;
  }

  /** Frees every layout derived from `source` (called when `source` itself is freed). */
  drop(source: WasmBlock): void {
    const layouts = this.#bySource.get(source);
    if (layouts === undefined) return;
    this.#bySource.delete(source);
    for (const block of layouts.values()) this.#host.free(block);
  }

  /** Forgets everything (the executor was disposed: its memory is gone). */
  clear(): void {
    this.#bySource.clear();
  }

  /** Bytes held in layouts of the current memory. */
  get bytes(): number {
    let n = 0;
    for (const layouts of this.#bySource.values())
      for (const b of layouts.values()) if (!b.freed && b.gen === this.#host.generation) n += b.bytes;
    return n;
  }
}
