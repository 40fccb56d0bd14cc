export {
  WebGpuExecutor,
  isDeviceLost,
  type KernelContext,
  type WebGpuKernel,
  type WebGpuExecutorOptions,
  type WebGpuStats,
} from "./executor.js";
export {
  createWebGpuExecutor,
  registerWebGpuKernels,
  webgpuKernels,
  type CreateWebGpuExecutorOptions,
  type WebGpuKernelList,
} from "./register-kernels.js";
export { GpuTensor, type GpuStorage } from "./gpu-tensor.js";
export type { NodeBindings, DeviceOptions } from "./device.js";
export type { ProgramInfo } from "./program.js";
export { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./kernels/shared.wgsl.js";
export { DROPOUT_WGSL, fmix32, dropoutThreshold } from "./kernels/dropout.wgsl.js";
/** The paper's slopes (@attngraph/graph's; kept here for existing imports). */
export { alibiSlopes } from "@attngraph/graph";
export { adapterName, type AdapterInfoLike } from "./adapter-name.js";
