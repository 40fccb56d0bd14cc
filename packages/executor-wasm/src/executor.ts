/// <reference lib="dom" preserve="true" />
// (WebAssembly, BufferSource: @types/node 20 declares neither; this also reaches code that type-checks this source.)
// The wasm executor: values live in one WebAssembly.Memory shared by every kernel of the module; the allocator
// (heap.ts) runs on the host. After a trap the module and its memory are re-instantiated: values of the old memory
// become stale. Uploaded values remember their host tensor (a reference, not a copy) and are restored into the new
// memory on first use, so a session's cached weights keep working; an upload written in place since (a decode
// session's key/value cache) is not, its contents died with the memory. Arenas re-allocate their block on their next
// `view`; anything else from before the trap is an error when used, and is ignored when released. Long kernels called
// with a signal work in chunks (chunks.ts); one waiting between chunks when a trap replaces the module gives up.
import { AttnGraphError, Tensor, UnsupportedError, describe, formatShape, sameShape, type AnyTensor } from "@attngraph/tensor";
import type { Executor, KernelCall, Support } from "@attngraph/graph";
import { KernelTable } from "@attngraph/graph";
import { WasmArena } from "./arena.js";
import { DEFAULT_CHUNK_WORK } from "./chunks.js";
import { WasmContext } from "./context.js";
import { DerivedLayouts } from "./derived.js";
import { WasmHeap, blockBytes, type Subject } from "./heap.js";
import { loadKernelModule, type KernelExports, type WasmFlavour, type WasmModuleName, type WasmSource } from "./module.js";
import { controlWords } from "./threads/control.js";
import { ThreadPool, threadsUnavailable, type ThreadCall } from "./threads/pool.js";
import { WasmValue, type WasmBlock } from "./value.js";

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

const EXECUTOR = "wasm";
/** Most threads (the module's per-thread areas: assembly/threads.ts MAX_THREADS). */
const MAX_THREADS = 16;
/** Fewest multiply-adds (bytes, for memory-bound calls) a call needs to be split over the threads (see WasmExecutorOptions.parallelWork). */
const DEFAULT_PARALLEL_WORK = 2 ** 20;
const PAGE = 65536;
const DEFAULT_MAX = 2 ** 31;
/**
 * Two rank-6 view descriptors (2 × 12 i32) in the first 128 bytes, then the kernel params area (PARAMS_BYTES: the
 * fused attention's whole-call entries read three params blocks side by side, up to 264 bytes).
 */
const DESCRIPTOR_BYTES = 448;
const PARAMS_OFFSET = 128;
const PARAMS_BYTES = 320;

/** One instance of the module with its memory, allocator and scratch. Replaced whole after a trap. */
class Instance {
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

  constructor(module: WebAssembly.Module, maxBytes: number, readonly gen: number, threads: number) {
    const maximum = Math.min(65536, Math.ceil(maxBytes / PAGE));
    const shared = threads > 1;
    this.memory = new WebAssembly.Memory({ initial: Math.min(16, maximum), maximum, ...(shared ? { shared: true } : {}) });
    this.exports = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports as unknown as KernelExports;
    this.heap = new WasmHeap(this.memory, this.exports.heapBase(), maxBytes);
    this.descriptors = this.heap.alloc(DESCRIPTOR_BYTES, "wasm descriptors and params");
    const paramsBytes = Math.max(this.exports.attentionParamsBytes(), this.exports.attentionGradParamsBytes());
    if (paramsBytes > PARAMS_BYTES) throw new Error(`wasm module: attention params need ${paramsBytes} bytes, the host reserves ${PARAMS_BYTES}`);
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
    this.#callScratch[i] = { ptr: this.heap.alloc(size, `${subject} (kernel scratch${i === 0 ? "" : ` of parallel call ${i}`})`), bytes: size };
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

export class WasmExecutor implements Executor<WasmValue> {
  readonly specVersion = 1 as const;
  readonly name = EXECUTOR;
  /** download() copies out of the module's memory: the runtime need not copy its dense results again. */
  readonly downloadsCopy = true;
  readonly #kernels = new KernelTable<WasmKernel | ChunkedWasmKernel>(EXECUTOR, "(call, ctx) => WasmValue");
  readonly #options: WasmExecutorOptions;
  readonly #maxBytes: number;
  #module: WebAssembly.Module | undefined;
  #flavour: WasmFlavour | undefined;
  #inst: Instance | undefined;
  #gen = 0;
  /** Threads asked for (1: none), and the pool while it runs. */
  readonly #threads: number;
  #pool: ThreadPool | undefined;
  /** Aborts the pool start under way (init()'s, or a restart after a trap), if any. */
  #starting: AbortController | undefined;
  #threadReason: string | undefined;
  /** Whether the module in use is the threaded build (its memory shared). */
  #shared = false;
  #loading: Promise<void> | undefined;
  /** Set by dispose(), never cleared: every await of init() checks it, so that nothing comes alive after it. */
  #disposed = false;
  readonly #ctx: WasmContext;
  readonly #derived: DerivedLayouts;
  /** Counters for tests and profiling: uploads made, traps caught, instances made, calls split over the workers. */
  readonly stats = { uploads: 0, traps: 0, instances: 0, threaded: 0 };

  constructor(options: WasmExecutorOptions = {}) {
    this.#options = options;
    const max = options.maxMemoryBytes ?? DEFAULT_MAX;
    if (!(Number.isFinite(max) && max >= PAGE)) {
      throw new AttnGraphError("attr", describe("executor wasm.maxMemoryBytes", "invalid memory limit", "a number of bytes >= 65536", String(max)), {
        subject: "executor wasm.maxMemoryBytes",
      });
    }
    this.#maxBytes = Math.min(max, 2 ** 32);
    const chunkWork = options.chunkWork ?? DEFAULT_CHUNK_WORK;
    if (!(Number.isSafeInteger(chunkWork) && chunkWork >= 1)) {
      const subject = "executor wasm.chunkWork";
      throw new AttnGraphError("attr", describe(subject, "invalid chunk size", "a whole number of multiply-adds >= 1", String(chunkWork)), { subject });
    }
    const threads = options.threads ?? 1;
    if (!(Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS)) {
      const subject = "executor wasm.threads";
      throw new AttnGraphError("attr", describe(subject, "invalid thread count", `a whole number from 1 to ${MAX_THREADS}`, String(threads)), { subject });
    }
    this.#threads = threads;
    const parallelWork = options.parallelWork ?? DEFAULT_PARALLEL_WORK;
    if (!(Number.isSafeInteger(parallelWork) && parallelWork >= 0)) {
      const subject = "executor wasm.parallelWork";
      throw new AttnGraphError("attr", describe(subject, "invalid split threshold", "a whole number of multiply-adds >= 0", String(parallelWork)), { subject });
    }
    const self = this;
    this.#derived = new DerivedLayouts({
      alloc: (bytes, subject) => this.#newBlock(bytes, subject, undefined, false),
      free: (block) => this.#freeBlock(block),
      get generation() {
        return self.#gen;
      },
    });
    const prepack = options.prepackWeights ?? true;
    this.#ctx = new WasmContext({
      get exports() {
        return self.#instance().exports;
      },
      get buffer() {
        return self.#instance().memory.buffer;
      },
      get descriptors() {
        return self.#instance().descriptors;
      },
      get params() {
        return self.#instance().params;
      },
      get generation() {
        return self.#gen;
      },
      chunkWork,
      newBlock: (bytes, subject) => this.#newBlock(bytes, subject, undefined, false),
      releaseValue: (v) => this.release(v),
      scratch: (bytes, subject) => this.#instance().scratch(bytes, subject),
      derived: (source, key, bytes, subject, fill) => (prepack ? this.#derived.get(source, key, bytes, subject, fill) : undefined),
      wroteInto: (block) => this.#wroteInto(block),
      get threads() {
        return self.#pool !== undefined && self.#pool.lost === undefined ? self.#pool.threads : 1;
      },
      get maxCalls() {
        return self.#pool !== undefined && self.#pool.lost === undefined ? self.#pool.maxCalls : 1;
      },
      parallel: (calls) => this.#parallel(calls),
      parallelWork,
      callScratch: (i, bytes, subject) => this.#instance().scratchOf(i, bytes, subject),
      callParams: (i) => this.#instance().paramsOf(i),
    });
  }

  /**
   * Threads asked for, threads running (1 until `init()`, and while workers restart after a trap), and why fewer run
   * than were asked for (no SharedArrayBuffer, a page that is not cross-origin isolated, a worker that failed).
   */
  get threading(): { readonly requested: number; readonly threads: number; readonly reason?: string } {
    const running = this.#pool !== undefined && this.#pool.lost === undefined ? this.#pool.threads : 1;
    const why = () => (this.#disposed ? "the executor is disposed" : (this.#threadReason ?? this.#pool?.lost ?? "workers not started yet (init() starts them)"));
    const reason = running < this.#threads ? why() : undefined;
    return { requested: this.#threads, threads: running, ...(reason !== undefined ? { reason } : {}) };
  }

  /** One line for a plan's explain(): the flavour and the threads, with the reason when fewer run than were asked. */
  describe(): string {
    const t = this.threading;
    const threads = t.threads === 1 ? "1 thread" : `${t.threads} threads`;
    return `${this.#flavour ?? "not initialised"} flavour, ${threads}${t.reason !== undefined ? ` (${t.requested} asked for: ${t.reason})` : ""}`;
  }

  /** The calls over the host and the workers (see ThreadPool.run); one by one here when no pool runs. */
  #parallel(calls: readonly ThreadCall[]): void {
    const inst = this.#instance();
    const here = (c: ThreadCall) => (inst.exports[c.name] as (...a: number[]) => unknown)(...c.args);
    const pool = this.#pool;
    if (pool === undefined || pool.lost !== undefined || calls.length <= 1) {
      for (const c of calls) here(c);
      return;
    }
    this.stats.threaded++;
    pool.run(calls, here);
  }

  /** The module flavour in use ("relaxed" or "simd"); undefined before `init()`. */
  get flavour(): WasmFlavour | undefined {
    return this.#flavour;
  }

  /** The current module memory (replaced after a trap). */
  get memory(): WebAssembly.Memory {
    return this.#instance().memory;
  }

  /** The module's exports (for tests and your own kernels' setup); valid until a trap re-instantiates the module. */
  get exportsForTests(): KernelExports {
    return this.#instance().exports;
  }

  /** Weights packed into the matmul's layout so far (each once per upload), and the bytes those layouts hold now. */
  get prepacked(): { readonly made: number; readonly bytes: number } {
    return { made: this.#derived.made, bytes: this.#derived.bytes };
  }

  /**
   * Bytes in live blocks of the current memory: values, arenas and weights' packed layouts (kernel scratch and
   * descriptors not counted).
   */
  get inUseBytes(): number {
    const inst = this.#instance();
    return inst.heap.inUseBytes - inst.scratchBytes - DESCRIPTOR_BYTES;
  }

  /** (The first overload types an inline `(call, ctx) => …` as a WasmKernel; TypeScript gives a union no parameter types.) */
  registerKernel(kind: string, kernel: WasmKernel): void;
  registerKernel(kind: string, kernel: WasmKernel | ChunkedWasmKernel): void;
  registerKernel(kind: string, kernel: WasmKernel | ChunkedWasmKernel): void {
    this.#kernels.register(kind, kernel);
  }

  /** Never throws: `ok: false` for an op kind with no kernel (user ops included, unless a kernel was registered). */
  supports(kind: string, _attrs: Readonly<Record<string, unknown>>): Support {
    return this.#kernels.supports(kind);
  }

  /**
   * Loads and instantiates the module and starts the workers (once; later calls return the same promise). The
   * runtime's `compile()` calls it. dispose() wins whenever it comes: an init() it overtakes (while the module loads
   * or compiles, while the workers start) rejects with the executor's "disposed" error, having started nothing that
   * outlives the dispose (workers already spawned are terminated by it), and init() after dispose() rejects with that
   * error too. Rejecting rather than resolving: a caller awaiting init() (compile()) would otherwise go on with an
   * executor that cannot run.
   */
  init(): Promise<void> {
    if (this.#disposed) return Promise.reject(this.#disposedError());
    return (this.#loading ??= this.#load());
  }

  async #load(): Promise<void> {
    const unavailable = this.#threads > 1 ? threadsUnavailable() : undefined;
    if (unavailable !== undefined) this.#threadReason = unavailable;
    const shared = this.#threads > 1 && unavailable === undefined;
    const { module, flavour } = await loadKernelModule(this.#options.flavour ?? "auto", this.#options.sources, shared);
    // dispose() came while the module loaded: instantiating now would bring the executor back.
    if (this.#disposed) throw this.#disposedError();
    this.#module = module;
    this.#flavour = flavour;
    this.#shared = shared;
    this.#inst = this.#instantiate();
    if (shared) await this.#startPool(module, this.#inst);
    // dispose() came while the workers started: it aborted the start (#stopWorkers), so none of them runs now.
    if (this.#disposed) throw this.#disposedError();
  }

  /**
   * Starts the workers over `inst`'s memory; a failure leaves one thread and the reason. #stopWorkers (dispose, a
   * new instance after a trap) aborts it at any of its awaits, and the workers spawned so far are terminated then.
   */
  async #startPool(module: WebAssembly.Module, inst: Instance): Promise<void> {
    const starting = new AbortController();
    this.#starting = starting;
    try {
      const pool = await ThreadPool.start(module, inst.memory, inst.control, this.#threads, starting.signal);
      // Aborted after the pool was ready but before this line ran: it is no longer wanted.
      if (starting.signal.aborted) pool.stop();
      else {
        this.#pool = pool;
        this.#threadReason = undefined;
      }
    } catch (e) {
      if (!starting.signal.aborted) this.#threadReason = `workers did not start (${e instanceof Error ? e.message : String(e)})`;
    } finally {
      if (this.#starting === starting) this.#starting = undefined;
    }
  }

  /** Stops the workers, those running and those still starting. */
  #stopWorkers(): void {
    this.#starting?.abort();
    this.#starting = undefined;
    this.#pool?.stop();
    this.#pool = undefined;
  }

  /** A dense copy of `tensor` in the module's memory; an int32 tensor (ids, targets) stays int32, 4 bytes an element. */
  upload(tensor: AnyTensor): WasmValue {
    const block = this.#newBlock(tensor.size * 4, () => `upload of a tensor ${formatShape(tensor.shape)} ${tensor.dtype}`, tensor, false);
    block.refs = 1;
    this.#copyIn(tensor, block.ptr);
    this.stats.uploads++;
    return new WasmValue(block, tensor.shape, undefined, 0, tensor.dtype);
  }

  /**
   * A float32 value back on the host (a copy). The contract's `download` gives float32 tensors (every op's output is
   * one), so an int32 value (an uploaded id tensor) is an "input" error here rather than a Tensor whose type would
   * lie about its data: `downloadAny` gives it back as a Tensor<"int32">.
   */
  download(value: WasmValue): Tensor {
    const v = this.#live(value, "download");
    if (v.dtype !== "float32") {
      const subject = "download";
      const got = `an int32 value ${formatShape(v.shape)}`;
      const what = "download() gives float32 tensors (every op output is float32); use downloadAny() for an int32 value";
      throw new AttnGraphError("input", describe(subject, what, "a float32 value", got), { subject, expected: "a float32 value", got });
    }
    const [lo, hi] = v.span();
    const base = v.block.ptr / 4;
    return new Tensor(this.#ctx.f32().slice(base + lo, base + hi + 1), v.shape, v.strides, v.offset - lo);
  }

  /** Any value back on the host (a copy), of its own dtype: Tensor<"int32"> for uploaded ids and targets. */
  downloadAny(value: WasmValue): AnyTensor {
    const v = this.#live(value, "download");
    if (v.dtype === "float32") return this.download(v);
    const [lo, hi] = v.span();
    const base = v.block.ptr / 4;
    return new Tensor<"int32">(this.#ctx.i32().slice(base + lo, base + hi + 1), v.shape, v.strides, v.offset - lo);
  }

  createArena(elements: number): WasmArena {
    return new WasmArena(
      {
        newBlock: (bytes, subject) => this.#newBlock(bytes, subject, undefined, true),
        revive: (block, subject) => this.#revive(block, subject),
        free: (block) => this.#freeBlock(block),
        copy: (src, dst) => this.#ctx.copy(this.#live(src, "arena copy"), dst),
      },
      elements,
    );
  }

  /** Drops one reference; the block is freed with its last one. Arena values and stale values are ignored. */
  release(value: WasmValue): void {
    if (!(value instanceof WasmValue) || value.released) return;
    value.released = true;
    const block = value.block;
    if (block.arena) return;
    if (--block.refs <= 0) this.#freeBlock(block);
  }

  /** Synchronous for a call without a signal; with one, a long kernel may answer with a Promise (ChunkedWasmKernel). */
  dispatch(call: UnsignalledCall): WasmValue;
  dispatch(call: KernelCall<WasmValue>): WasmValue | Promise<WasmValue>;
  dispatch(call: KernelCall<WasmValue>): WasmValue | Promise<WasmValue> {
    const kernel = this.#kernels.get(call.kind);
    if (kernel === undefined) throw new UnsupportedError(`op ${call.kind} on executor ${EXECUTOR}`, { subject: call.node });
    const gen = this.#instance().gen;
    const inputs = call.inputs;
    for (let i = 0; i < inputs.length; i++) {
      const v = inputs[i];
      // A live value of this instance needs nothing (the usual case, checked without naming it); else #live says why.
      if (v instanceof WasmValue && (v.released || v.block.freed || v.block.gen !== gen)) this.#live(v, `${call.node}.inputs[${i}]`);
    }
    let out: unknown;
    try {
      out = kernel(call, this.#ctx);
    } catch (e) {
      throw this.#trapped(call, e);
    }
    // Only a call with a signal may be answered later (a chunked kernel); a trap in any of its chunks is this call's.
    if (call.signal !== undefined && out instanceof Promise) {
      return out.then(
        (v: unknown) => checkOutput(call, v),
        (e: unknown) => {
          throw this.#trapped(call, e);
        },
      );
    }
    return checkOutput(call, out);
  }

  /** A trap re-instantiates the module (its memory may be corrupt) and fails the call naming the node; else `e` as is. */
  #trapped(call: KernelCall<WasmValue>, e: unknown): unknown {
    if (!(e instanceof WebAssembly.RuntimeError)) return e;
    // A kernel still running when dispose() came (one that awaits, holding the old exports) must not revive the module.
    if (this.#disposed) return this.#disposedError(e);
    this.stats.traps++;
    this.#inst = this.#instantiate();
    // The workers' instances were over the old memory: new ones start in the background (one thread meanwhile).
    if (this.#shared) void this.#startPool(this.#module!, this.#inst);
    const what = `WebAssembly trap in the kernel for op ${call.kind} on executor ${EXECUTOR} (${e.message}); the module and its memory were re-instantiated`;
    return new AttnGraphError("wasm-trap", describe(call.node, what), { subject: call.node, cause: e });
  }

  /**
   * Lets go of the module and its memory and terminates the workers, whenever it is called: before init(), while
   * init() is pending (which then rejects, see init()), or after. Every later use (init(), upload, dispatch, …) fails
   * with the executor's "disposed" error. A second call does nothing more.
   */
  dispose(): void {
    this.#disposed = true;
    this.#derived.clear();
    this.#stopWorkers();
    this.#inst = undefined;
    this.#module = undefined;
    this.#gen++;
  }

  #instance(): Instance {
    if (this.#inst === undefined) {
      if (this.#disposed) throw this.#disposedError();
      const what = "not initialised: await init() first (compile() does)";
      throw new AttnGraphError("not-initialised", describe(`executor ${EXECUTOR}`, what), { subject: `executor ${EXECUTOR}` });
    }
    return this.#inst;
  }

  /** What any use after dispose() fails with: the error this executor has always given a disposed executor. */
  #disposedError(cause?: unknown): AttnGraphError {
    const subject = `executor ${EXECUTOR}`;
    return new AttnGraphError("not-initialised", describe(subject, "disposed"), { subject, ...(cause === undefined ? {} : { cause }) });
  }

  #instantiate(): Instance {
    this.stats.instances++;
    const gen = ++this.#gen;
    // The workers' instances are over the old memory (a trap replaces it).
    this.#stopWorkers();
    return new Instance(this.#module!, this.#maxBytes, gen, this.#shared ? this.#threads : 1);
  }

  /** Writes `tensor`'s elements row-major at byte address `ptr`, as the bits of its own dtype (never converted). */
  #copyIn(tensor: AnyTensor, ptr: number): void {
    tensor.copyInto(tensor.dtype === "int32" ? this.#ctx.i32() : this.#ctx.f32(), ptr / 4);
  }

  #newBlock(bytes: number, subject: Subject, source: AnyTensor | undefined, arena: boolean): WasmBlock {
    const inst = this.#instance();
    return { ptr: inst.heap.alloc(bytes, subject), bytes, refs: 0, gen: inst.gen, source, arena, freed: false };
  }

  #freeBlock(block: WasmBlock): void {
    if (block.freed) return;
    block.freed = true;
    if (block.gen === this.#inst?.gen) this.#inst.heap.free(block.ptr, block.bytes);
    if (block.source !== undefined) this.#derived.drop(block);
  }

  /** After an in-place write: the block is no longer what its upload held (see WasmContext.wroteInto). */
  #wroteInto(block: WasmBlock): void {
    if (block.source === undefined) return;
    this.#derived.drop(block);
    block.source = undefined;
    block.writtenInPlace = true;
  }

  /** Moves a stale block into the current memory (uploads get their host data back; arenas get garbage). */
  #revive(block: WasmBlock, subject: string): void {
    const inst = this.#instance();
    if (block.gen === inst.gen) return;
    block.ptr = inst.heap.alloc(block.bytes, subject);
    block.gen = inst.gen;
    if (block.source !== undefined) this.#copyIn(block.source, block.ptr);
  }

  /** Checks that `v` may be read now, restoring an upload made before a trap. */
  #live(v: WasmValue, subject: string): WasmValue {
    if (!(v instanceof WasmValue)) {
      throw new AttnGraphError("input", describe(subject, "not a value of executor wasm", "a WasmValue", typeof v), { subject, expected: "a WasmValue", got: typeof v });
    }
    if (v.released || v.block.freed) {
      throw new AttnGraphError("input", describe(subject, "value was released", "a live value", "a released one"), { subject, expected: "a live value", got: "a released one" });
    }
    const gen = this.#instance().gen;
    if (v.block.gen !== gen) {
      if (v.block.source === undefined && !v.block.arena) {
        const what = v.block.writtenInPlace
          ? "written in place (a decode session's cache) before the wasm module was re-instantiated (after a trap): its contents died with the old memory (a decoder's reset() makes new caches)"
          : "value from before the wasm module was re-instantiated (after a trap); upload it again";
        throw new AttnGraphError("input", describe(subject, what), { subject });
      }
      this.#revive(v.block, `${subject} (restored after a trap)`);
    }
    return v;
  }
}

/** A kernel may return anything; a wrong shape caught here names the node instead of failing downstream. */
function checkOutput(call: KernelCall<WasmValue>, out: unknown): WasmValue {
  if (!(out instanceof WasmValue) || !sameShape(out.shape, call.outShape)) {
    const expected = formatShape(call.outShape);
    const got = out instanceof WasmValue ? formatShape(out.shape) : typeof out;
    throw new AttnGraphError("kernel-output", describe(call.node, `kernel for op ${call.kind} on executor ${EXECUTOR} returned the wrong shape`, expected, got), {
      subject: call.node,
      expected,
      got,
    });
  }
  return out;
}
