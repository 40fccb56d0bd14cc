// What a wasm kernel is and what the executor takes: the kernel types (plain and chunked) and the options, with the
// checks of the options' values (each an "attr" error naming the option).
import { AttnGraphError, describe } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK } from "./chunks.js";
import type { WasmContext } from "./context.js";
import type { WasmFlavour, WasmModuleName, WasmSource } from "./module.js";
import type { WasmValue } from "./value.js";

/**
 * A wasm kernel: validates `call`, writes its result into the module's memory through `ctx` and returns a value of
 * shape `call.outShape` (new, `call.out`, or a view of an input made with `ctx.view`). It must not mutate its inputs,
 * except kv-append's cache, which it writes in place and reports with `ctx.wroteInto`.
 */
export type WasmKernel = (call: KernelCall<WasmValue>, ctx: WasmContext) => WasmValue;

/** A call without an AbortSignal: always answered synchronously. */
export type UnsignalledCall = KernelCall<WasmValue> & { readonly signal?: undefined };

/**
 * A kernel that can run long (the built-in projection, out-proj, score, weighted-sum, mask, softmax, attention,
 * layer-norm, gelu, relu, add, embedding and cross-entropy, the fused block ops, and the backward ops but pad).
 * Synchronous for a call without a signal, and for any call whose work fits one chunk of `ctx.chunkWork`
 * multiply-adds; a bigger call with a signal works in chunks, yielding to the event loop and checking the signal
 * between them, and answers with a Promise (rejected with a KernelAbortedError once the signal fired).
 */
export interface ChunkedWasmKernel {
  (call: UnsignalledCall, ctx: WasmContext): WasmValue;
  (call: KernelCall<WasmValue>, ctx: WasmContext): WasmValue | Promise<WasmValue>;
}

export interface WasmExecutorOptions {
  /** "auto" (default): relaxed SIMD when the engine validates it, else plain SIMD. */
  readonly flavour?: WasmFlavour | "auto";
  /** Memory beyond this is refused before growing, with an error naming the tensor. Default 2 GiB (max 4 GiB). */
  readonly maxMemoryBytes?: number;
  /** Where to load the modules from (bytes or URLs); default: dist/wasm of this package. */
  readonly sources?: Partial<Record<WasmModuleName, WasmSource>>;
  /**
   * Threads to run the big kernels on (default 1): the host's thread plus `threads − 1` workers (Node worker_threads,
   * browser Web Workers) over one shared memory, each matmul split by rows of its output and each fused attention by
   * batch or kv head. Needs SharedArrayBuffer: in a browser, a cross-origin isolated page (COOP same-origin, COEP
   * require-corp). Where that is missing, or a worker cannot start, the executor runs on one thread and
   * `executor.threading.reason` (and the plan's explain()) says why. The numbers do not depend on it, bit for bit.
   */
  readonly threads?: number;
  /**
   * With threads: calls of fewer multiply-adds than this stay on one thread (default 2²⁰, below which waking the
   * workers costs more than the split saves); the memory-bound ones (a decoding step's matrix–vector products and
   * attention) count bytes streamed instead. 0 splits every call that can be split: what the conformance runner
   * uses so that small golden cases exercise the threads too.
   */
  readonly parallelWork?: number;
  /**
   * Work per chunk of a long kernel run with a signal, in multiply-adds (default 2²⁸, about 16 ms on one core): an
   * aborted run stops within about one chunk. Smaller means quicker cancellation and more yields.
   */
  readonly chunkWork?: number;
  /**
   * Pack each uploaded weight into the matmul's panel layout at its first use and keep it beside the weight (default
   * true): later runs skip packing (~10–15% of a projection). Costs one more copy of every weight a matmul reads as
   * its B operand; false packs per call instead (less memory). Either way the numbers are the same, bit for bit.
   */
  readonly prepackWeights?: boolean;
}

/** Most threads (the module's per-thread areas: assembly/threads.ts MAX_THREADS). */
export const MAX_THREADS = 16;
/** Fewest multiply-adds (bytes, for memory-bound calls) a call needs to be split over the threads (see WasmExecutorOptions.parallelWork). */
const DEFAULT_PARALLEL_WORK = 2 ** 20;
export const PAGE = 65536;
const DEFAULT_MAX = 2 ** 31;

/** The options' values, defaults applied, each checked. */
export function checkedOptions(options: WasmExecutorOptions): {
  readonly maxBytes: number;
  readonly chunkWork: number;
  readonly threads: number;
  readonly parallelWork: number;
} {
  const max = options.maxMemoryBytes ?? DEFAULT_MAX;
  if (!(Number.isFinite(max) && max >= PAGE))
    invalid("maxMemoryBytes", "invalid memory limit", "a number of bytes >= 65536", max);
  const chunkWork = options.chunkWork ?? DEFAULT_CHUNK_WORK;
  if (!(Number.isSafeInteger(chunkWork) && chunkWork >= 1))
    invalid("chunkWork", "invalid chunk size", "a whole number of multiply-adds >= 1", chunkWork);
  const threads = options.threads ?? 1;
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS))
    invalid("threads", "invalid thread count", `a whole number from 1 to ${MAX_THREADS}`, threads);
  const parallelWork = options.parallelWork ?? DEFAULT_PARALLEL_WORK;
  if (!(Number.isSafeInteger(parallelWork) && parallelWork >= 0))
    invalid("parallelWork", "invalid split threshold", "a whole number of multiply-adds >= 0", parallelWork);
  return { maxBytes: Math.min(max, 2 ** 32), chunkWork, threads, parallelWork };
}

function invalid(option: string, what: string, expected: string, got: number): never {
  const subject = `executor wasm.${option}`;
  throw new AttnGraphError("attr", describe(subject, what, expected, String(got)), { subject });
}
