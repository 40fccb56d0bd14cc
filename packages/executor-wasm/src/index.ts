export {
  WasmExecutor,
  type ChunkedWasmKernel,
  type UnsignalledCall,
  type WasmExecutorOptions,
  type WasmKernel,
} from "./executor.js";
export { DEFAULT_CHUNK_WORK } from "./chunks.js";
// Moved to @attngraph/graph (shared by every executor), re-exported here so that imports from this package still work.
export { KernelAbortedError } from "@attngraph/graph";
export {
  createWasmExecutor,
  registerWasmKernels,
  wasmKernels,
  type CreateWasmExecutorOptions,
  type WasmKernelList,
} from "./register-kernels.js";
export { WasmContext } from "./context.js";
export { WasmArena } from "./arena.js";
export { WasmValue, type WasmBlock } from "./value.js";
export { loadKernelModule, wasmBytes, type KernelExports, type WasmFlavour, type WasmSource } from "./module.js";
/** The paper's slopes (@attngraph/graph's; kept here for existing imports). */
export { alibiSlopes } from "@attngraph/graph";
