// What a wasm kernel gets besides its call: the module's exports and the memory helpers. Kernels pass byte addresses
// to the module and never keep a typed-array view across an allocation (an allocation may grow the memory, which
// detaches every view); `f32()`/`f64()`/`i32()` hand out a view of the current buffer.
import {
  AttnGraphError,
  UnsupportedError,
  contiguousStrides,
  describe,
  formatShape,
  sameShape,
  sizeOf,
  type DType,
  type Shape,
} from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import type { KernelExports } from "./module.js";
import type { ThreadCall } from "./threads/pool.js";
import { WasmValue, type WasmBlock } from "./value.js";
import type { Subject } from "./heap.js";

/** The executor's side of the context: memory and blocks of the current module instance. */
export interface ContextHost {
  readonly exports: KernelExports;
  readonly buffer: ArrayBuffer;
  newBlock(bytes: number, subject: Subject): WasmBlock;
  releaseValue(value: WasmValue): void;
  /** Scratch memory valid until the next `scratch` call (one block, grown when needed). */
  scratch(bytes: number, subject: string): number;
  /** 2 × 12 i32 slots for view descriptors, allocated once per instance. */
  readonly descriptors: number;
  /** The params area (320 bytes) for kernels that read their numbers from memory, allocated once per instance. */
  readonly params: number;
  /** Changes whenever the module is re-instantiated (after a trap) or disposed: addresses from before are stale. */
  readonly generation: number;
  /** Work per chunk of a long kernel called with a signal, in multiply-adds (chunks.ts). */
  readonly chunkWork: number;
  /** A layout derived once from an upload and kept (derived.ts); undefined: none (not an upload, no room, turned off). */
  derived(
    source: WasmBlock,
    key: string,
    bytes: number,
    subject: string,
    fill: (address: number) => void,
  ): number | undefined;
  /** A kernel wrote into `block` in place (see `WasmContext.wroteInto`). */
  wroteInto(block: WasmBlock): void;
  /** Threads running now (1 without a pool). */
  readonly threads: number;
  /** Fewest multiply-adds a call needs to be split over the threads. */
  readonly parallelWork: number;
  /** The most calls one `parallel` job may hold (1 without a pool). */
  readonly maxCalls: number;
  /** Runs the calls over every thread, each taking the next until none is left (see ThreadPool.run). */
  parallel(calls: readonly ThreadCall[]): void;
  /** Call i's own scratch (i = 0: the shared `scratch`). */
  callScratch(i: number, bytes: number, subject: string): number;
  /** Call i's own params area (i = 0: `params`). */
  callParams(i: number): number;
}

const DESC_RANK = 6;

export class WasmContext {
  readonly #host: ContextHost;
  #f32: Float32Array | undefined;
  #f64: Float64Array | undefined;
  #i32: Int32Array | undefined;

  constructor(host: ContextHost) {
    this.#host = host;
  }

  get exports(): KernelExports {
    return this.#host.exports;
  }

  /**
   * The params block a kernel writes its numbers into right before calling the module (the fused attention): shared,
   * so it is written and read within one synchronous call, never across a yield.
   */
  get params(): number {
    return this.#host.params;
  }

  /** Changes whenever the module is re-instantiated or disposed (see ContextHost). */
  get generation(): number {
    return this.#host.generation;
  }

  /** Work per chunk of a long kernel called with a signal, in multiply-adds. */
  get chunkWork(): number {
    return this.#host.chunkWork;
  }

  /** Threads a kernel may split its work over now (1 without a pool, or while it restarts). */
  get threads(): number {
    return this.#host.threads;
  }

  /** Fewest multiply-adds (bytes, for memory-bound calls) a call needs to be split over the threads (WasmExecutorOptions.parallelWork). */
  get parallelWork(): number {
    return this.#host.parallelWork;
  }

  /** The most calls a kernel may cut its work into for one `parallel` job (1 without a pool). */
  get maxCalls(): number {
    return this.#host.maxCalls;
  }

  /**
   * Runs the calls over every thread (the host's too), each thread taking the next call until none is left; returns
   * when all are done. The calls must write disjoint memory and each use its own scratch and params (`callScratch`,
   * `callParams` with the call's index). With one thread, one by one here.
   */
  parallel(calls: readonly ThreadCall[]): void {
    this.#host.parallel(calls);
  }

  /** Call i's own scratch block (i = 0: the shared one `scratch` gives), valid until its next request. */
  callScratch(i: number, bytes: number, subject: string): number {
    return this.#host.callScratch(i, bytes, subject);
  }

  /** Call i's own params area (i = 0: `params`). */
  callParams(i: number): number {
    return this.#host.callParams(i);
  }

  /** A float32 view of the whole memory, valid until the next allocation. */
  f32(): Float32Array {
    const buf = this.#host.buffer;
    if (this.#f32?.buffer !== buf) this.#f32 = new Float32Array(buf);
    return this.#f32;
  }

  f64(): Float64Array {
    const buf = this.#host.buffer;
    if (this.#f64?.buffer !== buf) this.#f64 = new Float64Array(buf);
    return this.#f64;
  }

  /** An int32 view of the whole memory (int32 values, descriptors), valid until the next allocation. */
  i32(): Int32Array {
    const buf = this.#host.buffer;
    if (this.#i32?.buffer !== buf) this.#i32 = new Int32Array(buf);
    return this.#i32;
  }

  /** A new dense value of `shape` (garbage contents); `subject` names it in a memory-limit error. */
  alloc(shape: Shape, subject: string, dtype: DType = "float32"): WasmValue {
    const block = this.#host.newBlock(sizeOf(shape) * 4, () => `${subject} ${formatShape(shape)} ${dtype}`);
    block.refs = 1;
    return new WasmValue(block, shape, undefined, 0, dtype);
  }

  /**
   * Where a compute kernel writes its result: `call.out` when the planner gave one (checked: a dense value of `shape`),
   * else a new value.
   */
  output(call: KernelCall<WasmValue>, shape: Shape): WasmValue {
    const out: unknown = call.out;
    if (out === undefined || out === null) return this.alloc(shape, `${call.node} (output of op ${call.kind})`);
    if (out instanceof WasmValue && out.dense && sameShape(out.shape, shape)) return out;
    const subject = `${call.node}.out`;
    if (!(out instanceof WasmValue)) {
      throw new AttnGraphError(
        "input",
        describe(subject, `planned output of op ${call.kind} is not a wasm value`, "a WasmValue", typeof out),
        {
          subject,
          expected: "a WasmValue",
          got: typeof out,
        },
      );
    }
    if (!sameShape(out.shape, shape)) {
      throw new AttnGraphError(
        "shape",
        describe(
          subject,
          `planned output of op ${call.kind} has the wrong shape`,
          formatShape(shape),
          formatShape(out.shape),
        ),
        {
          subject,
          expected: formatShape(shape),
          got: formatShape(out.shape),
        },
      );
    }
    if (!out.dense) {
      const got = `strides ${formatShape(out.strides)}`;
      throw new AttnGraphError(
        "input",
        describe(subject, `planned output of op ${call.kind} must be dense and row-major`, "contiguous strides", got),
        {
          subject,
          expected: "contiguous strides",
          got,
        },
      );
    }
    return out;
  }

  /**
   * Scratch bytes (16-aligned address), valid until the next `scratch` call. A kernel working in chunks must not keep
   * anything here across a yield (another kernel may take the scratch meanwhile): it allocates its own (`alloc`).
   */
  scratch(bytes: number, subject: string): number {
    return this.#host.scratch(bytes, subject);
  }

  /** Another view of `v`'s block (one more reference), of the same dtype. */
  view(
    v: WasmValue,
    shape: Shape,
    strides: readonly number[] = contiguousStrides(shape),
    offset = v.offset,
  ): WasmValue {
    v.block.refs++;
    return new WasmValue(v.block, shape, strides, offset, v.dtype);
  }

  /**
   * The weight `w`'s matmul B operand `b` ([k, n], a view of w's block) packed for `matmulPacked`, made at its first use
   * and kept while `w` is uploaded; undefined when w is not an upload (or prepacking is off, or it does not fit): pack
   * per call then.
   */
  packedMatmulB(
    w: WasmValue,
    b: { readonly address: number; readonly rowStride: number; readonly colStride: number },
    k: number,
    n: number,
    subject: string,
  ): number | undefined {
    if (k === 0 || n === 0) return undefined; // (whether w is an upload is the layout cache's rule: derived.ts)
    const e = this.exports;
    // The layout depends on where in the block B starts and how it is strided (not on the block's address, which a
    // restored upload changes), and on k and n.
    const key = `matmul-b @${(b.address - w.block.ptr) / 4} ${b.rowStride},${b.colStride} ${k}x${n}`;
    const bytes = e.packedBFloats(n, k) * 4;
    return this.#host.derived(w.block, key, bytes, `${subject} (weight packed for the matmul)`, (dst) =>
      e.packMatmulB(b.address, b.rowStride, b.colStride, k, n, dst),
    );
  }

  release(v: WasmValue): void {
    this.#host.releaseValue(v);
  }

  /**
   * Tells the executor that a kernel wrote into an input's block in place (kv-append's cache, the one op that does):
   * layouts derived from the old contents (a prepacked weight) are dropped, and an upload is no longer restored from
   * its host tensor after a trap, since that tensor no longer holds the block's contents; using it then is an error
   * instead of silently reading the contents it had when uploaded.
   */
  wroteInto(v: WasmValue): void {
    this.#host.wroteInto(v.block);
  }

  /** `v` when it is dense, else a dense copy (`temp`: the caller releases it). */
  dense(v: WasmValue, subject: string): { readonly value: WasmValue; readonly temp: boolean } {
    if (v.dense) return { value: v, temp: false };
    const copy = this.alloc(v.shape, subject, v.dtype);
    this.copy(v, copy);
    return { value: copy, temp: true };
  }

  /** Copies any view `src` into the dense value `dst` of the same size (bits: float32 and int32 alike). */
  copy(src: WasmValue, dst: WasmValue): void {
    if (src.size === 0) return;
    this.exports.copy(src.address, this.desc(src), dst.address);
  }

  /**
   * Writes `v`'s layout as the module's rank-6 descriptor (shape[6], strides[6], leading dims padded with size 1) into
   * descriptor `slot` and returns its address. Dims of size 1 are dropped and dims that are dense relative to each
   * other merged first, so any rank works while the merged layout has at most 6 dims. The slots are shared: a kernel
   * working in chunks writes its descriptor again before each chunk.
   */
  desc(v: WasmValue, slot = 0): number {
    const dims: [number, number][] = [];
    for (let i = 0; i < v.rank; i++) {
      const n = v.shape[i]!;
      const s = v.strides[i]!;
      if (n === 1) continue;
      const last = dims.at(-1);
      // The last axis stays its own dim: kernels walk rows along it.
      if (last !== undefined && i < v.rank - 1 && last[1] === s * n) {
        last[0] *= n;
        last[1] = s;
      } else dims.push([n, s]);
    }
    if (v.rank > 0 && v.shape[v.rank - 1] === 1) dims.push([1, 0]);
    if (dims.length > DESC_RANK)
      throw new UnsupportedError(
        `wasm view of rank ${v.rank} whose layout does not collapse to ${DESC_RANK} dims (shape ${formatShape(v.shape)}, strides ${formatShape(v.strides)})`,
      );
    while (dims.length < DESC_RANK) dims.unshift([1, 0]);
    const addr = this.#host.descriptors + slot * 48;
    const ints = this.i32();
    const base = addr / 4;
    for (let d = 0; d < DESC_RANK; d++) {
      ints[base + d] = dims[d]![0];
      ints[base + DESC_RANK + d] = dims[d]![1];
    }
    return addr;
  }
}
