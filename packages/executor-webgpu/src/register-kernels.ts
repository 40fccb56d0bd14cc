// The built-in WebGPU kernels, in one explicit list (tfjs's register_all_kernels.ts). Nothing registers on import, and
// nothing touches the GPU until init(): `createWebGpuExecutor()` is safe to call where WebGPU may be missing.
import { WebGpuExecutor, type WebGpuExecutorOptions, type WebGpuKernel } from "./executor.js";
import { addKernel } from "./kernels/add.wgsl.js";
import { addLayerNormKernel } from "./kernels/add-layer-norm.wgsl.js";
import { alibiKernel } from "./kernels/alibi.wgsl.js";
import { attentionKernel } from "./kernels/attention.wgsl.js";
import { crossEntropyKernel } from "./kernels/cross-entropy.wgsl.js";
import { dropoutKernel } from "./kernels/dropout.wgsl.js";
import { embeddingKernel } from "./kernels/embedding.wgsl.js";
import { positionEmbeddingKernel } from "./kernels/position-embedding.wgsl.js";
import { geluKernel } from "./kernels/gelu.wgsl.js";
import { pointwiseKernel } from "./kernels/pointwise.wgsl.js";
import { mulKernel } from "./kernels/mul.wgsl.js";
import { rmsNormKernel } from "./kernels/rms-norm.wgsl.js";
import { rmsNormGradKernel, rmsNormWeightGradKernel } from "./kernels/rms-norm-grad.wgsl.js";
import { kvAppendKernel } from "./kernels/kv-append.wgsl.js";
import { layerNormKernel } from "./kernels/layer-norm.wgsl.js";
import { linearGeluKernel } from "./kernels/linear-gelu.wgsl.js";
import { maskKernel } from "./kernels/mask.wgsl.js";
import { outProjKernel } from "./kernels/out-proj.wgsl.js";
import { projectionKernel } from "./kernels/projection.wgsl.js";
import { reshapeKernel } from "./kernels/reshape.wgsl.js";
import { ropeKernel } from "./kernels/rope.wgsl.js";
import { scoreKernel } from "./kernels/score.wgsl.js";
import { sliceKernel } from "./kernels/slice.wgsl.js";
import { softmaxKernel } from "./kernels/softmax.wgsl.js";
import { transposeKernel } from "./kernels/transpose.wgsl.js";
import { weightedSumKernel } from "./kernels/weighted-sum.wgsl.js";
import { crossEntropyGradKernel } from "./kernels/cross-entropy-grad.wgsl.js";
import { embeddingGradKernel } from "./kernels/embedding-grad.wgsl.js";
import { positionEmbeddingGradKernel } from "./kernels/position-embedding-grad.wgsl.js";
import { geluGradKernel } from "./kernels/gelu-grad.wgsl.js";
import { layerNormGradKernel, layerNormWeightGradKernel } from "./kernels/layer-norm-grad.wgsl.js";
import { linearWeightGradKernel } from "./kernels/linear-weight-grad.wgsl.js";
import { maskGradKernel } from "./kernels/mask-grad.wgsl.js";
import { maskModKernel, scoreModInputGradKernel, scoreModKernel } from "./kernels/score-mod.wgsl.js";
import { padKernel } from "./kernels/pad.wgsl.js";
import { softmaxGradKernel } from "./kernels/softmax-grad.wgsl.js";
import { sumToKernel } from "./kernels/sum-to.wgsl.js";
import { attentionGradKernel, attentionLseKernel } from "./kernels/attention-grad.wgsl.js";
import { adamMomentKernel, adamStepKernel } from "./kernels/adam.wgsl.js";
import { sgdMomentumKernel, sgdStepKernel } from "./kernels/sgd.wgsl.js";
import { clipByNormKernel, sumSquaresKernel } from "./kernels/grad-norm.wgsl.js";
import { gradAccumulateKernel } from "./kernels/grad-accumulate.wgsl.js";

export type WebGpuKernelList = ReadonlyArray<readonly [kind: string, kernel: WebGpuKernel]>;

/** One kernel per built-in op kind of @attngraph/graph, in the registry's order. */
export const webgpuKernels: WebGpuKernelList = Object.freeze([
  ["projection", projectionKernel],
  ["reshape", reshapeKernel],
  ["transpose", transposeKernel],
  ["slice", sliceKernel],
  ["rope", ropeKernel],
  ["score", scoreKernel],
  ["alibi", alibiKernel],
  ["score-mod", scoreModKernel],
  ["mask-mod", maskModKernel],
  ["mask", maskKernel],
  ["softmax", softmaxKernel],
  ["dropout", dropoutKernel],
  ["weighted-sum", weightedSumKernel],
  ["out-proj", outProjKernel],
  ["attention", attentionKernel],
  // Incremental decoding: the key/value cache a decode session keeps between calls (written in place).
  ["kv-append", kvAppendKernel],
  ["layer-norm", layerNormKernel],
  ["gelu", geluKernel],
  ["add", addKernel],
  ["rms-norm", rmsNormKernel],
  // Every elementwise op declared as an expression (silu, its gradient, users' own).
  ["pointwise", pointwiseKernel],
  ["mul", mulKernel],
  ["embedding", embeddingKernel],
  ["position-embedding", positionEmbeddingKernel],
  ["cross-entropy", crossEntropyKernel],
  ["linear-gelu", linearGeluKernel],
  ["add-layer-norm", addLayerNormKernel],
  // Backward ops (what grad() adds).
  ["sum-to", sumToKernel],
  ["pad", padKernel],
  ["linear-weight-grad", linearWeightGradKernel],
  ["softmax-grad", softmaxGradKernel],
  ["mask-grad", maskGradKernel],
  ["score-mod-input-grad", scoreModInputGradKernel],
  ["layer-norm-grad", layerNormGradKernel],
  ["layer-norm-weight-grad", layerNormWeightGradKernel],
  ["gelu-grad", geluGradKernel],
  ["rms-norm-grad", rmsNormGradKernel],
  ["rms-norm-weight-grad", rmsNormWeightGradKernel],
  ["embedding-grad", embeddingGradKernel],
  ["position-embedding-grad", positionEmbeddingGradKernel],
  ["cross-entropy-grad", crossEntropyGradKernel],
  // The fused attention backward (what the scheduler puts in place of the chain's backward rules).
  ["attention-lse", attentionLseKernel],
  ["attention-grad", attentionGradKernel],
  // Optimizer ops (Adam / AdamW, SGD).
  ["adam-moment", adamMomentKernel],
  ["adam-step", adamStepKernel],
  ["sgd-momentum", sgdMomentumKernel],
  ["sgd-step", sgdStepKernel],
  ["sum-squares", sumSquaresKernel],
  ["clip-by-norm", clipByNormKernel],
  ["grad-accumulate", gradAccumulateKernel],
] as const);

/** Registers each listed kernel; a kind already registered on `executor` is a "duplicate-kernel" error. */
export function registerWebGpuKernels(
  executor: WebGpuExecutor,
  kernels: WebGpuKernelList = webgpuKernels,
): WebGpuExecutor {
  for (const [kind, kernel] of kernels) executor.registerKernel(kind, kernel);
  return executor;
}

export interface CreateWebGpuExecutorOptions extends WebGpuExecutorOptions {
  /** The kernels to register; default: every built-in kernel (`webgpuKernels`). */
  readonly kernels?: WebGpuKernelList;
}

/**
 * A WebGPU executor with the built-in kernels registered. Never throws and touches no GPU: the device is requested by
 * `init()` (which `compile()` calls), where a missing adapter is a clear "webgpu: no adapter" error.
 */
export function createWebGpuExecutor(options: CreateWebGpuExecutorOptions = {}): WebGpuExecutor {
  const { kernels, ...rest } = options;
  return registerWebGpuKernels(new WebGpuExecutor(rest), kernels ?? webgpuKernels);
}
