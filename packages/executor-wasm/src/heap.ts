/// <reference lib="dom" preserve="true" />
// (WebAssembly, BufferSource: @types/node 20 declares neither; this also reaches code that type-checks this source.)
// The allocator over the module's memory, in TypeScript: a free list kept sorted by address, best fit, neighbours
// coalesced on free, every block a multiple of 64 bytes (64-aligned for SIMD and cache lines). Memory grows only when no
// free block fits, so a run that frees what it allocated leaves the next identical run nothing to grow; and a growth
// past `maxBytes` is refused before `memory.grow` with an error naming what was being allocated.
import { AttnGraphError, describe } from "@attngraph/tensor";

const ALIGN = 64;
const PAGE = 65536;

interface FreeBlock {
  ptr: number;
  bytes: number;
}

/** Rounds a byte count up to the block granularity (a zero-size block still takes one unit, so its address is unique). */
/** What an allocation is for, in a memory-limit error; a function is called only when the error is made. */
export type Subject = string | (() => string);

export function subjectText(subject: Subject): string {
  return typeof subject === "function" ? subject() : subject;
}

export function blockBytes(bytes: number): number {
  return Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
}

export function formatBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

export class WasmHeap {
  readonly #memory: WebAssembly.Memory;
  readonly #maxBytes: number;
  readonly #free: FreeBlock[] = [];
  /** One past the highest byte ever handed out; everything above is untouched memory. */
  #top: number;
  #inUse = 0;

  constructor(memory: WebAssembly.Memory, base: number, maxBytes: number) {
    this.#memory = memory;
    this.#maxBytes = maxBytes;
    this.#top = Math.ceil(base / ALIGN) * ALIGN;
  }

  /** Bytes in live blocks. */
  get inUseBytes(): number {
    return this.#inUse;
  }

  /**
   * A block of at least `bytes` (use `blockBytes(bytes)` when freeing); `subject` names it in a memory-limit error (a
   * function: called only then, so a run's allocations format no shapes).
   */
  alloc(bytes: number, subject: Subject): number {
    const size = blockBytes(bytes);
    let best = -1;
    for (let i = 0; i < this.#free.length; i++) {
      const f = this.#free[i]!;
      if (f.bytes >= size && (best < 0 || f.bytes < this.#free[best]!.bytes)) best = i;
    }
    let ptr: number;
    if (best >= 0) {
      const f = this.#free[best]!;
      ptr = f.ptr;
      if (f.bytes === size) this.#free.splice(best, 1);
      else {
        f.ptr += size;
        f.bytes -= size;
      }
    } else {
      // A free block that ends at the top is extended instead of leaving it as a hole.
      const last = this.#free.at(-1);
      const start = last !== undefined && last.ptr + last.bytes === this.#top ? last.ptr : this.#top;
      this.#ensure(start + size, size, subject);
      if (start !== this.#top) this.#free.pop();
      ptr = start;
      this.#top = start + size;
    }
    this.#inUse += size;
    return ptr;
  }

  free(ptr: number, bytes: number): void {
    const size = blockBytes(bytes);
    this.#inUse -= size;
    // Binary search for the insertion point, then merge with the neighbours it touches.
    let lo = 0;
    let hi = this.#free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#free[mid]!.ptr < ptr) lo = mid + 1;
      else hi = mid;
    }
    const prev = this.#free[lo - 1];
    const next = this.#free[lo];
    if (prev !== undefined && prev.ptr + prev.bytes === ptr) {
      prev.bytes += size;
      if (next !== undefined && prev.ptr + prev.bytes === next.ptr) {
        prev.bytes += next.bytes;
        this.#free.splice(lo, 1);
      }
    } else if (next !== undefined && ptr + size === next.ptr) {
      next.ptr = ptr;
      next.bytes += size;
    } else this.#free.splice(lo, 0, { ptr, bytes: size });
  }

  /** Grows the memory to hold `end` bytes, refusing (before growing) past the limit. */
  #ensure(end: number, size: number, lazySubject: Subject): void {
    const have = this.#memory.buffer.byteLength;
    if (end <= have) return;
    if (end > this.#maxBytes) {
      const subject = subjectText(lazySubject);
      const expected = `at most ${formatBytes(this.#maxBytes)} of wasm memory (maxMemoryBytes)`;
      const got = `${formatBytes(size)} more, ${formatBytes(end)} in all`;
      throw new AttnGraphError(
        "memory-limit",
        describe(subject, `allocating ${formatBytes(size)} would grow the wasm memory past its limit`, expected, got),
        {
          subject,
          expected,
          got,
        },
      );
    }
    // Grow by at least a quarter of what there is, to keep the number of grows small, but never past the limit.
    const want = Math.min(Math.max(end, have + have / 4), this.#maxBytes);
    const pages = Math.ceil((want - have) / PAGE);
    try {
      this.#memory.grow(pages);
    } catch (cause) {
      const subject = subjectText(lazySubject);
      const expected = `${formatBytes(pages * PAGE)} more wasm memory`;
      throw new AttnGraphError(
        "memory-limit",
        describe(
          subject,
          `the engine refused to grow the wasm memory for ${formatBytes(size)}`,
          expected,
          String(cause),
        ),
        {
          subject,
          expected,
          got: String(cause),
          cause,
        },
      );
    }
  }
}
