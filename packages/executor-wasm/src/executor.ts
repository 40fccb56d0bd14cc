/// <reference lib="dom" preserve="true" />
// (WebAssembly, BufferSource: @types/node 20 declares neither; this also reaches code that type-checks this source.)
// The wasm executor: values live in one WebAssembly.Memory shared by every kernel of the module; the allocator
// (heap.ts) runs on the host. After a trap the module and its memory are re-instantiated: values of the old memory
// become stale. Uploaded values remember their host tensor (a reference, not a copy) and are restored into the new
// memory on first use, so a session's cached weights keep working; an upload written in place since (a decode
// session's key/value cache) is not, its contents died with the memory. Arenas re-allocate their block on their next
// `view`; anything else from before the trap is an error when used, and is ignored when released. Long kernels called
// with a signal work in chunks (chunks.ts); one waiting between chunks when a trap replaces the module gives up.
import { AttnGraphError, Tensor, UnsupportedError, describe, formatShape, type AnyTensor } from "@attngraph/tensor";
import { keepsStrides, writeUpload } from "./upload-layout.js";
import type { Executor, KernelCall, Support } from "@attngraph/graph";
import { KernelTable, checkCall } from "@attngraph/graph";
import { WasmArena } from "./arena.js";
import { WasmContext } from "./context.js";
import { DerivedLayouts } from "./derived.js";
import type { Subject } from "./heap.js";
import { loadKernelModule, type KernelExports, type WasmFlavour } from "./module.js";
import {
  checkedOptions,
  type ChunkedWasmKernel,
  type UnsignalledCall,
  type WasmExecutorOptions,
  type WasmKernel,
} from "./executor-options.js";
import { DESCRIPTOR_BYTES, Instance } from "./instance.js";
import { Workers } from "./threads/workers.js";
import { WasmValue, type WasmBlock } from "./value.js";
import { checkFloat32, checkOutput, checkUnreleased } from "./value-checks.js";

export type { ChunkedWasmKernel, UnsignalledCall, WasmExecutorOptions, WasmKernel } from "./executor-options.js";

const EXECUTOR = "wasm";

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
  /** The worker threads asked for and the pool while it runs. */
  readonly #workers: Workers;
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
    const { maxBytes, chunkWork, threads, parallelWork } = checkedOptions(options);
    this.#maxBytes = maxBytes;
    this.#workers = new Workers(threads);
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
      derived: (source, key, bytes, subject, fill) =>
        prepack ? this.#derived.get(source, key, bytes, subject, fill) : undefined,
      wroteInto: (block) => this.#wroteInto(block),
      get threads() {
        return self.#workers.threads;
      },
      get maxCalls() {
        return self.#workers.maxCalls;
      },
      parallel: (calls) => {
        if (this.#workers.run(calls, this.#instance().exports)) this.stats.threaded++;
      },
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
    return this.#workers.threading(this.#disposed);
  }

  /** One line for a plan's explain(): the flavour and the threads, with the reason when fewer run than were asked. */
  describe(): string {
    const t = this.threading;
    const threads = t.threads === 1 ? "1 thread" : `${t.threads} threads`;
    return `${this.#flavour ?? "not initialised"} flavour, ${threads}${t.reason !== undefined ? ` (${t.requested} asked for: ${t.reason})` : ""}`;
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
    const shared = this.#workers.shared();
    const { module, flavour } = await loadKernelModule(this.#options.flavour ?? "auto", this.#options.sources, shared);
    // dispose() came while the module loaded: instantiating now would bring the executor back.
    if (this.#disposed) throw this.#disposedError();
    this.#module = module;
    this.#flavour = flavour;
    this.#shared = shared;
    this.#inst = this.#instantiate();
    if (shared) await this.#workers.start(module, this.#inst);
    // dispose() came while the workers started: it aborted the start (Workers.stop), so none of them runs now.
    if (this.#disposed) throw this.#disposedError();
  }

  /**
   * A copy of `tensor` in the module's memory; an int32 tensor (ids, targets) stays int32, 4 bytes an element. Dense
   * row-major, or a transpose of a dense tensor as it lies (upload-layout.ts).
   */
  upload(tensor: AnyTensor): WasmValue {
    const block = this.#newBlock(
      tensor.size * 4,
      () => `upload of a tensor ${formatShape(tensor.shape)} ${tensor.dtype}`,
      tensor,
      false,
    );
    block.refs = 1;
    this.#copyIn(tensor, block.ptr);
    this.stats.uploads++;
    return new WasmValue(block, tensor.shape, keepsStrides(tensor) ? tensor.strides : undefined, 0, tensor.dtype);
  }

  /**
   * A float32 value back on the host (a copy). The contract's `download` gives float32 tensors (every op's output is
   * one), so an int32 value (an uploaded id tensor) is an "input" error here rather than a Tensor whose type would
   * lie about its data: `downloadAny` gives it back as a Tensor<"int32">.
   */
  download(value: WasmValue): Tensor {
    const v = this.#live(value, "download");
    checkFloat32(v);
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
  dispatch(given: KernelCall<WasmValue>): WasmValue | Promise<WasmValue> {
    const kernel = this.#kernels.get(given.kind);
    if (kernel === undefined)
      throw new UnsupportedError(`op ${given.kind} on executor ${EXECUTOR}`, { subject: given.node });
    const gen = this.#instance().gen;
    const inputs = given.inputs;
    for (let i = 0; i < inputs.length; i++) {
      const v = inputs[i];
      // A live value of this instance needs nothing (the usual case, checked without naming it); else #live says why.
      if (v instanceof WasmValue && (v.released || v.block.freed || v.block.gen !== gen))
        this.#live(v, `${given.node}.inputs[${i}]`);
    }
    const call = checkCall(given);
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
    if (this.#shared) void this.#workers.start(this.#module!, this.#inst);
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
    this.#workers.stop();
    this.#inst = undefined;
    this.#module = undefined;
    this.#gen++;
  }

  #instance(): Instance {
    if (this.#inst === undefined) {
      if (this.#disposed) throw this.#disposedError();
      const what = "not initialised: await init() first (compile() does)";
      throw new AttnGraphError("not-initialised", describe(`executor ${EXECUTOR}`, what), {
        subject: `executor ${EXECUTOR}`,
      });
    }
    return this.#inst;
  }

  /** What any use after dispose() fails with: the error this executor has always given a disposed executor. */
  #disposedError(cause?: unknown): AttnGraphError {
    const subject = `executor ${EXECUTOR}`;
    return new AttnGraphError("not-initialised", describe(subject, "disposed"), {
      subject,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  #instantiate(): Instance {
    this.stats.instances++;
    const gen = ++this.#gen;
    // The workers' instances are over the old memory (a trap replaces it).
    this.#workers.stop();
    return new Instance(this.#module!, this.#maxBytes, gen, this.#shared ? this.#workers.requested : 1);
  }

  /** Writes `tensor`'s elements row-major at byte address `ptr`, as the bits of its own dtype (never converted). */
  #copyIn(tensor: AnyTensor, ptr: number): void {
    writeUpload(tensor, tensor.dtype === "int32" ? this.#ctx.i32() : this.#ctx.f32(), ptr / 4);
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
    checkUnreleased(v, subject);
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
