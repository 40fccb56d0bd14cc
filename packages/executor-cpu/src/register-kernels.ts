// The built-in CPU kernels, in one explicit list (tfjs's register_all_kernels.ts). Nothing registers on import: the
// user calls `createCpuExecutor()` or `registerCpuKernels()`, and a modular build can pass a shorter list so the
// bundler drops the kernels it never names.
import { CpuExecutor, type ChunkedCpuKernel, type CpuExecutorOptions, type CpuKernel } from "./executor.js";
import { addKernel } from "./kernels/add.js";
import { addLayerNormKernel } from "./kernels/add-layer-norm.js";
import { linearGeluKernel } from "./kernels/linear-gelu.js";
import { alibiKernel } from "./kernels/alibi.js";
import { crossEntropyKernel } from "./kernels/cross-entropy.js";
import { embeddingKernel } from "./kernels/embedding.js";
import { positionEmbeddingKernel } from "./kernels/position-embedding.js";
import { geluKernel } from "./kernels/gelu.js";
import { pointwiseKernel } from "./kernels/pointwise.js";
import { mulKernel } from "./kernels/mul.js";
import { rmsNormKernel } from "./kernels/rms-norm.js";
import { layerNormKernel } from "./kernels/layer-norm.js";
import { attentionKernel } from "./kernels/attention.js";
import { dropoutKernel } from "./kernels/dropout.js";
import { maskKernel } from "./kernels/mask.js";
import { outProjKernel } from "./kernels/out-proj.js";
import { projectionKernel } from "./kernels/projection.js";
import { reshapeKernel } from "./kernels/reshape.js";
import { ropeKernel } from "./kernels/rope.js";
import { scoreKernel } from "./kernels/score.js";
import { sliceKernel } from "./kernels/slice.js";
import { kvAppendKernel } from "./kernels/kv-append.js";
import { softmaxKernel } from "./kernels/softmax.js";
import { transposeKernel } from "./kernels/transpose.js";
import { weightedSumKernel } from "./kernels/weighted-sum.js";
import { sumToKernel } from "./kernels/sum-to.js";
import { padKernel } from "./kernels/pad.js";
import { linearWeightGradKernel } from "./kernels/linear-weight-grad.js";
import { softmaxGradKernel } from "./kernels/softmax-grad.js";
import { maskGradKernel } from "./kernels/mask-grad.js";
import { maskModKernel, scoreModKernel } from "./kernels/score-mod.js";
import { scoreModInputGradKernel } from "./kernels/score-mod-input-grad.js";
import { layerNormGradKernel } from "./kernels/layer-norm-grad.js";
import { layerNormWeightGradKernel } from "./kernels/layer-norm-weight-grad.js";
import { geluGradKernel } from "./kernels/gelu-grad.js";
import { rmsNormGradKernel, rmsNormWeightGradKernel } from "./kernels/rms-norm-grad.js";
import { embeddingGradKernel } from "./kernels/embedding-grad.js";
import { positionEmbeddingGradKernel } from "./kernels/position-embedding-grad.js";
import { crossEntropyGradKernel } from "./kernels/cross-entropy-grad.js";
import { attentionGradKernel, attentionLseKernel } from "./kernels/attention-grad.js";
import { adamMomentKernel } from "./kernels/adam-moment.js";
import { adamStepKernel } from "./kernels/adam-step.js";
import { sgdMomentumKernel } from "./kernels/sgd-momentum.js";
import { sgdStepKernel } from "./kernels/sgd-step.js";
import { sumSquaresKernel } from "./kernels/sum-squares.js";
import { clipByNormKernel } from "./kernels/clip-by-norm.js";
import { gradAccumulateKernel } from "./kernels/grad-accumulate.js";

export type CpuKernelList = ReadonlyArray<readonly [kind: string, kernel: CpuKernel | ChunkedCpuKernel]>;

/** One kernel per built-in op kind of @attngraph/graph, in the registry's order. */
export const cpuKernels: CpuKernelList = Object.freeze([
  ["projection", projectionKernel],
  ["reshape", reshapeKernel],
  ["transpose", transposeKernel],
  ["slice", sliceKernel],
  ["kv-append", kvAppendKernel],
  ["rope", ropeKernel],
  ["score", scoreKernel],
  ["alibi", alibiKernel],
  ["mask", maskKernel],
  ["score-mod", scoreModKernel],
  ["mask-mod", maskModKernel],
  ["softmax", softmaxKernel],
  ["dropout", dropoutKernel],
  ["weighted-sum", weightedSumKernel],
  ["out-proj", outProjKernel],
  ["attention", attentionKernel],
  ["layer-norm", layerNormKernel],
  ["gelu", geluKernel],
  ["add", addKernel],
  ["rms-norm", rmsNormKernel],
  ["pointwise", pointwiseKernel],
  ["mul", mulKernel],
  ["embedding", embeddingKernel],
  ["position-embedding", positionEmbeddingKernel],
  ["cross-entropy", crossEntropyKernel],
  ["linear-gelu", linearGeluKernel],
  ["add-layer-norm", addLayerNormKernel],
  // Backward ops (the kernels grad() of @attngraph/autodiff runs).
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
  // The fused attention backward (what the scheduler's backward fusion puts in place of the chain's rules).
  ["attention-lse", attentionLseKernel],
  ["attention-grad", attentionGradKernel],
  // Optimizer updates (what a training step adds after the gradients).
  ["adam-moment", adamMomentKernel],
  ["adam-step", adamStepKernel],
  ["sgd-momentum", sgdMomentumKernel],
  ["sgd-step", sgdStepKernel],
  ["sum-squares", sumSquaresKernel],
  ["clip-by-norm", clipByNormKernel],
  ["grad-accumulate", gradAccumulateKernel],
] as const);

/** Registers each listed kernel; a kind already registered on `executor` is a "duplicate-kernel" error. */
export function registerCpuKernels(executor: CpuExecutor, kernels: CpuKernelList = cpuKernels): CpuExecutor {
  for (const [kind, kernel] of kernels) executor.registerKernel(kind, kernel);
  return executor;
}

export interface CreateCpuExecutorOptions extends CpuExecutorOptions {
  /** The kernels to register; default: every built-in kernel (`cpuKernels`). */
  readonly kernels?: CpuKernelList;
}

/** A CPU executor with the built-in kernels (or `options.kernels`) registered. */
export function createCpuExecutor(options: CreateCpuExecutorOptions = {}): CpuExecutor {
  const { kernels, ...executor } = options;
  return registerCpuKernels(new CpuExecutor(executor), kernels ?? cpuKernels);
}
