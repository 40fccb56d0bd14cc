export {
  CpuExecutor,
  type ChunkedCpuKernel,
  type CpuExecutorOptions,
  type CpuKernel,
  type UnsignalledCall,
} from "./executor.js";
export { DEFAULT_CHUNK_WORK } from "./chunks.js";
// Moved to @attngraph/graph (shared by every executor), re-exported here so that imports from this package still work.
export { KernelAbortedError } from "@attngraph/graph";
export {
  createCpuExecutor,
  registerCpuKernels,
  cpuKernels,
  type CpuKernelList,
  type CreateCpuExecutorOptions,
} from "./register-kernels.js";
export type { StridedView } from "./kernels/strided.js";
export { projectionImpl, projectionKernel } from "./kernels/projection.js";
export { outProjImpl, outProjKernel } from "./kernels/out-proj.js";
export { reshapeImpl, reshapeKernel } from "./kernels/reshape.js";
export { transposeImpl, transposeKernel } from "./kernels/transpose.js";
export { sliceImpl, sliceKernel } from "./kernels/slice.js";
export { ropeImpl, ropeKernel } from "./kernels/rope.js";
export { scoreImpl, scoreKernel } from "./kernels/score.js";
export { alibiImpl, alibiKernel } from "./kernels/alibi.js";
/** The paper's slopes (@attngraph/graph's; kept here for existing imports). */
export { alibiSlopes } from "@attngraph/graph";
export { maskImpl, maskKernel } from "./kernels/mask.js";
export { findInvalidPadding } from "./kernels/key-padding.js";
export { softmaxImpl, softmaxKernel } from "./kernels/softmax.js";
export { dropoutImpl, dropoutKernel, dropoutBits, dropoutKeep, dropoutThreshold, fmix32 } from "./kernels/dropout.js";
export { weightedSumImpl, weightedSumKernel } from "./kernels/weighted-sum.js";
export { attentionImpl, attentionKernel } from "./kernels/attention.js";
export {
  attentionGradImpl,
  attentionGradKernel,
  attentionLseImpl,
  attentionLseKernel,
} from "./kernels/attention-grad.js";
export { matmul, type MatOperand, type VecOperand } from "./kernels/matmul.js";
