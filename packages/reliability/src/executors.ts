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
  },
];
