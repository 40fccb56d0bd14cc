// The built-in wasm kernels, in one explicit list (tfjs's register_all_kernels.ts). Nothing registers on import: the
// user calls `createWasmExecutor()` or `registerWasmKernels()`, and a modular build can pass a shorter list.
import { WasmExecutor, type ChunkedWasmKernel, type WasmExecutorOptions, type WasmKernel } from "./executor.js";
import { addKernel } from "./kernels/add.js";
import { addLayerNormKernel } from "./kernels/add-layer-norm.js";
import { alibiKernel } from "./kernels/alibi.js";
import { attentionKernel } from "./kernels/attention.js";
import { crossEntropyKernel } from "./kernels/cross-entropy.js";
import { dropoutKernel } from "./kernels/dropout.js";
import { embeddingKernel } from "./kernels/embedding.js";
import { positionEmbeddingKernel } from "./kernels/position-embedding.js";
import { geluKernel } from "./kernels/gelu.js";
import { pointwiseKernel } from "./kernels/pointwise.js";
import { mulKernel } from "./kernels/mul.js";
import { rmsNormKernel } from "./kernels/rms-norm.js";
import { kvAppendKernel } from "./kernels/kv-append.js";
import { layerNormKernel } from "./kernels/layer-norm.js";
import { linearGeluKernel } from "./kernels/linear-gelu.js";
import { maskKernel } from "./kernels/mask.js";
import { outProjKernel } from "./kernels/out-proj.js";
import { projectionKernel } from "./kernels/projection.js";
import { reshapeKernel } from "./kernels/reshape.js";
import { ropeKernel } from "./kernels/rope.js";
import { scoreKernel } from "./kernels/score.js";
import { sliceKernel } from "./kernels/slice.js";
import { softmaxKernel } from "./kernels/softmax.js";
import { transposeKernel } from "./kernels/transpose.js";
import { weightedSumKernel } from "./kernels/weighted-sum.js";
import { crossEntropyGradKernel } from "./kernels/cross-entropy-grad.js";
import { embeddingGradKernel } from "./kernels/embedding-grad.js";
import { positionEmbeddingGradKernel } from "./kernels/position-embedding-grad.js";
import { geluGradKernel } from "./kernels/gelu-grad.js";
import { rmsNormGradKernel, rmsNormWeightGradKernel } from "./kernels/rms-norm-grad.js";
import { layerNormGradKernel, layerNormWeightGradKernel } from "./kernels/layer-norm-grad.js";
import { linearWeightGradKernel } from "./kernels/linear-weight-grad.js";
import { maskGradKernel } from "./kernels/mask-grad.js";
import { maskModKernel, scoreModInputGradKernel, scoreModKernel } from "./kernels/score-mod.js";
import { attentionGradKernel, attentionLseKernel } from "./kernels/attention-grad.js";
import { padKernel } from "./kernels/pad.js";
import { softmaxGradKernel } from "./kernels/softmax-grad.js";
import { sumToKernel } from "./kernels/sum-to.js";
import { adamMomentKernel } from "./kernels/adam-moment.js";
import { adamStepKernel } from "./kernels/adam-step.js";
import { sgdMomentumKernel } from "./kernels/sgd-momentum.js";
import { sgdStepKernel } from "./kernels/sgd-step.js";
import { sumSquaresKernel } from "./kernels/sum-squares.js";
import { clipByNormKernel } from "./kernels/clip-by-norm.js";
import { gradAccumulateKernel } from "./kernels/grad-accumulate.js";

export type WasmKernelList = ReadonlyArray<readonly [kind: string, kernel: WasmKernel | ChunkedWasmKernel]>;

/** One kernel per built-in op kind of @attngraph/graph, in the registry's order. */
export const wasmKernels: WasmKernelList = Object.freeze([
  ["projection", projectionKernel],
  ["reshape", reshapeKernel],
  ["transpose", transposeKernel],
  ["slice", sliceKernel],
  ["rope", ropeKernel],
  ["score", scoreKernel],
  ["alibi", alibiKernel],
  ["mask", maskKernel],
  ["softmax", softmaxKernel],
  ["dropout", dropoutKernel],
  ["weighted-sum", weightedSumKernel],
  ["out-proj", outProjKernel],
  ["attention", attentionKernel],
  // Incremental decoding: the key/value cache a decode session keeps between calls (written in place).
  ["kv-append", kvAppendKernel],
  // Beyond attention: the ops of a transformer block and its loss.
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
  // Fused block ops: what the scheduler's block fusion puts in place of projection → gelu and add → layer-norm.
  ["linear-gelu", linearGeluKernel],
  ["add-layer-norm", addLayerNormKernel],
  // Backward ops: what grad() (@attngraph/autodiff) adds where composing forward ops would be slow or imprecise.
  ["sum-to", sumToKernel],
  ["pad", padKernel],
  ["linear-weight-grad", linearWeightGradKernel],
  ["softmax-grad", softmaxGradKernel],
  ["mask-grad", maskGradKernel],
  ["score-mod", scoreModKernel],
  ["mask-mod", maskModKernel],
  ["score-mod-input-grad", scoreModInputGradKernel],
  ["layer-norm-grad", layerNormGradKernel],
  ["layer-norm-weight-grad", layerNormWeightGradKernel],
  ["gelu-grad", geluGradKernel],
  ["rms-norm-grad", rmsNormGradKernel],
  ["rms-norm-weight-grad", rmsNormWeightGradKernel],
  ["embedding-grad", embeddingGradKernel],
  ["position-embedding-grad", positionEmbeddingGradKernel],
  ["cross-entropy-grad", crossEntropyGradKernel],
  // The fused attention backward: what the scheduler's backward fusion puts in place of the chain's rules.
  ["attention-lse", attentionLseKernel],
  ["attention-grad", attentionGradKernel],
  // Optimizer updates: what a training step adds after the gradients.
  ["adam-moment", adamMomentKernel],
  ["adam-step", adamStepKernel],
  ["sgd-momentum", sgdMomentumKernel],
  ["sgd-step", sgdStepKernel],
  ["sum-squares", sumSquaresKernel],
  ["clip-by-norm", clipByNormKernel],
  ["grad-accumulate", gradAccumulateKernel],
] as const);

/** Registers each listed kernel; a kind already registered on `executor` is a "duplicate-kernel" error. */
export function registerWasmKernels(executor: WasmExecutor, kernels: WasmKernelList = wasmKernels): WasmExecutor {
  for (const [kind, kernel] of kernels) executor.registerKernel(kind, kernel);
  return executor;
}

export interface CreateWasmExecutorOptions extends WasmExecutorOptions {
  /** The kernels to register; default: every built-in kernel (`wasmKernels`). */
  readonly kernels?: WasmKernelList;
}

/**
 * A wasm executor with the built-in kernels (or `options.kernels`) registered. Call `await executor.init()` (the
 * runtime's `compile()` does) before dispatching by hand.
 */
export function createWasmExecutor(options: CreateWasmExecutorOptions = {}): WasmExecutor {
  return registerWasmKernels(new WasmExecutor(options), options.kernels ?? wasmKernels);
}
