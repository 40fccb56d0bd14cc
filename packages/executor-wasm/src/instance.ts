// One instance of the kernel module: its memory, the host-side allocator over it, the descriptors and params areas,
// and the kernels' scratch. A trap replaces the whole instance (executor.ts).
import { WasmHeap, blockBytes } from "./heap.js";
import type { KernelExports } from "./module.js";
import { PAGE } from "./executor-options.js";
import { controlWords } from "./threads/control.js";

/**
 * Two rank-6 view descriptors (2 × 12 i32) in the first 128 bytes, then the kernel params area (PARAMS_BYTES: the
 * fused attention's whole-call entries read three params blocks side by side, up to 264 bytes).
 */
export const DESCRIPTOR_BYTES = 448;
const PARAMS_OFFSET = 128;
const PARAMS_BYTES = 320;

/** One instance of the module with its memory, allocator and scratch. Replaced whole after a trap. */
export class Instance {
  readonly memory: WebAssembly.Memory;
  readonly exports: KernelExports;
  readonly heap: WasmHeap;
  readonly descriptors: number;
  /** The thread pool's control block (threaded module only; 0 otherwise). */
  readonly control: number;
  /** Kernel scratch: [0] the host's (`scratch`, also a parallel job's call 0), [i] a parallel job's call i. */
  readonly #callScratch: ({ ptr: number; bytes: number } | undefined)[] = [];
  /** Params areas of a parallel job's calls 1 .. (call 0 takes the host's `params`). */
  readonly #callParams: number[] = [];

  constructor(
    module: WebAssembly.Module,
    maxBytes: number,
    readonly gen: number,
    threads: number,
  ) {
    const maximum = Math.min(65536, Math.ceil(maxBytes / PAGE));
    const shared = threads > 1;
    this.memory = new WebAssembly.Memory({
      initial: Math.min(16, maximum),
      maximum,
      ...(shared ? { shared: true } : {}),
    });
    this.exports = new WebAssembly.Instance(module, { env: { memory: this.memory } })
      .exports as unknown as KernelExports;
    this.heap = new WasmHeap(this.memory, this.exports.heapBase(), maxBytes);
    this.descriptors = this.heap.alloc(DESCRIPTOR_BYTES, "wasm descriptors and params");
    const paramsBytes = Math.max(this.exports.attentionParamsBytes(), this.exports.attentionGradParamsBytes());
    if (paramsBytes > PARAMS_BYTES)
      throw new Error(`wasm module: attention params need ${paramsBytes} bytes, the host reserves ${PARAMS_BYTES}`);
    this.control = shared ? this.heap.alloc(controlWords(threads) * 4, "wasm thread control block") : 0;
  }

  /** Call i's params area (i = 0: the host's). */
  paramsOf(i: number): number {
    if (i === 0) return this.params;
    return (this.#callParams[i] ??= this.heap.alloc(PARAMS_BYTES, `wasm params area of parallel call ${i}`));
  }

  /** Call i's scratch (i = 0: the host's shared scratch), grown to the largest need seen. */
  scratchOf(i: number, bytes: number, subject: string): number {
    const own = this.#callScratch[i];
    if (own !== undefined && own.bytes >= bytes) return own.ptr;
    if (own !== undefined) this.heap.free(own.ptr, own.bytes);
    this.#callScratch[i] = undefined;
    const size = blockBytes(bytes);
    this.#callScratch[i] = {
      ptr: this.heap.alloc(size, `${subject} (kernel scratch${i === 0 ? "" : ` of parallel call ${i}`})`),
      bytes: size,
    };
    return this.#callScratch[i]!.ptr;
  }

  /** The params area (PARAMS_BYTES) for a kernel that takes its numbers in memory (written right before each call). */
  get params(): number {
    return this.descriptors + PARAMS_OFFSET;
  }

  /** Bytes held as kernel scratch (one block, grown to the largest need seen, never shrunk). */
  get scratchBytes(): number {
    return this.#callScratch[0]?.bytes ?? 0;
  }

  scratch(bytes: number, subject: string): number {
    return this.scratchOf(0, bytes, subject);
  }
}
