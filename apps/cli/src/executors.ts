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
const factories = new Map<string, () => Executor>([
  ["cpu", () => createCpuExecutor()],
  // Needs async init (loading its module): compile() initialises every executor it is given.
  ["wasm", () => createWasmExecutor()],
  // Requests its device in init() (navigator.gpu, or the webgpu package in Node); "webgpu: no adapter" fails compile.
  ["webgpu", () => createWebGpuExecutor()],
]);

/** Executors for a comma-separated list of names, in preference order, with the kernels of `--ops` registered. */
export function executorsFor(list: string, ops?: UserOps): Executor[] {
  return list.split(",").map((name) => {
    const make = factories.get(name.trim());
    if (make) return registerUserKernels(make(), ops);
    throw new UsageError(`unknown executor "${clip(name)}"; available: ${[...factories.keys()].join(", ")}`);
  });
}
