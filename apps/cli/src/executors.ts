// Executors by the names the CLI accepts, in the order a comma list gives them (preference order).
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import type { Executor } from "@attngraph/graph";
import { clip } from "@attngraph/tensor";
import { UsageError } from "./io.js";
import { registerUserKernels, type UserOps } from "./user-ops.js";

// A Map, not an object literal: the name is the user's string, and `factories["__proto__"]` or `["constructor"]`
// would find Object.prototype's members instead of saying the name is unknown.
const factories = new Map<string, (options: ExecutorOptions) => Executor>([
  ["cpu", () => createCpuExecutor()],
  // Needs async init (loading its module, starting its workers): compile() initialises every executor it is given.
  [
    "wasm",
    ({ threads, parallelWork }) =>
      createWasmExecutor({
        ...(threads !== undefined ? { threads } : {}),
        ...(parallelWork !== undefined ? { parallelWork } : {}),
      }),
  ],
  // Requests its device in init() (navigator.gpu, or the webgpu package in Node); "webgpu: no adapter" fails compile.
  ["webgpu", () => createWebGpuExecutor()],
]);

/** The executor of `--executor` when none is named. */
export const DEFAULT_EXECUTOR = "cpu";

/** What `--threads` sets: the wasm executor's threads (the others run on one). */
export interface ExecutorOptions {
  readonly threads?: number | undefined;
  /** The wasm executor's split threshold in multiply-adds (0: split every call; conformance does, see there). */
  readonly parallelWork?: number | undefined;
}

/** `--threads N` as a thread count (1 to 16), or undefined when not given. */
export function parseThreads(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(n) || n < 1 || n > 16)
    throw new UsageError(`--threads: expected a whole number from 1 to 16, got "${clip(text)}"`);
  return n;
}

/**
 * Executors for a comma-separated list of names, in preference order, with the kernels of `--ops` registered and
 * `options.threads` given to the wasm executor.
 */
export function executorsFor(list: string, ops?: UserOps, options: ExecutorOptions = {}): Executor[] {
  const executors = list.split(",").map((name) => {
    const make = factories.get(name.trim());
    if (make) return registerUserKernels(make(options), ops);
    throw new UsageError(`unknown executor "${clip(name)}"; available: ${[...factories.keys()].join(", ")}`);
  });
  // The other executors run on one thread: --threads without wasm would be dropped without a word.
  if (options.threads !== undefined && !executors.some((e) => e.name === "wasm")) {
    throw new UsageError(
      `--threads sets the wasm executor's threads, and the executors are ${clip(list)}: add wasm or leave --threads out`,
    );
  }
  return executors;
}
