// The executors under test, one entry each. Every suite in this package loops over this list, so adding an executor
// is one entry here.
import type { Executor } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor, type WasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor, type WebGpuExecutor } from "@attngraph/executor-webgpu";

export interface ExecutorEntry {
  readonly name: string;
  /** A fresh executor with every kernel registered. */
  create(): Executor | Promise<Executor>;
  /**
   * Memory the executor holds outside the JS heap and array buffers (a wasm Memory's live blocks, GPU buffers), for
   * the soak: how to read it, in what unit, and how much it may grow after warm-up. Absent: everything it holds is on
   * the heap or in array buffers, which the soak measures anyway.
   */
  readonly memory?: { readonly unit: string; read(executor: Executor): number; readonly bound: number };
  /**
   * What live values hold on the executor right now (wasm bytes in live blocks, GPU buffers handed out): back to its
   * starting value once every session using the executor is disposed, whatever happened to their runs.
   */
  readonly live?: { readonly unit: string; read(executor: Executor): number };
  /** Property cases relative to cpu (a software GPU adapter is slow): 1 = the same number. */
  readonly propertyShare?: number;
  /**
   * How long one small run may take before a test calls it a hang (default HANG_DEADLINE_MS). A software GPU adapter
   * compiles each new pipeline on the CPU: the first run of a case compiles all of them, and on a loaded 2-core CI
   * machine that alone has taken more than 10 s.
   */
  readonly hangDeadlineMs?: number;
}

/** How long one small run may take on a cpu or wasm executor before a test calls it a hang. */
export const HANG_DEADLINE_MS = 10_000;

/** The hang deadline of an executor entry. */
export function hangDeadline(entry: ExecutorEntry): number {
  return entry.hangDeadlineMs ?? HANG_DEADLINE_MS;
}

export const executors: readonly ExecutorEntry[] = [
  { name: "cpu", create: () => createCpuExecutor() },
  // Live blocks of the module's memory (values and arenas): what a leak of wasm memory would grow.
  {
    name: "wasm",
    create: () => createWasmExecutor(),
    memory: { unit: "wasm bytes in use", read: (ex) => (ex as WasmExecutor).inUseBytes, bound: 1024 ** 2 },
    live: { unit: "wasm bytes in use", read: (ex) => (ex as WasmExecutor).inUseBytes },
  },
  // GPU buffers are pooled: after warm-up a run creates none. A software adapter (SwiftShader in CI) is slow, so the
  // property tests give it a tenth of the cases.
  {
    name: "webgpu",
    create: () => createWebGpuExecutor(),
    memory: { unit: "GPU buffers created", read: (ex) => (ex as WebGpuExecutor).bufferCount, bound: 0 },
    live: { unit: "GPU buffers in use", read: (ex) => (ex as WebGpuExecutor).buffersInUse },
    propertyShare: 0.1,
    hangDeadlineMs: 120_000,
  },
];
