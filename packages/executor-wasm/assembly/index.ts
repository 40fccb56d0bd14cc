// The module's exports: one entry per kernel, plus what the host needs to lay out memory. The host (src/) owns the
// memory: it allocates every buffer after heapBase() and passes byte addresses; nothing here allocates.
export { copy } from "./strided";
export { maxThreads, setThreadSlot } from "./threads";
export { allFinite, matmul, matmulPacked, matmulPackedScratchBytes, matmulScratchBytes, matmulSkipZero, matvecPackedColumns, matvecRows, packMatmulB, packedBFloats } from "./matmul";
export { mask } from "./mask";
export { softmax } from "./softmax";
export { dropout, dropoutBits } from "./dropout";
export { rope, alibi } from "./position";
export { attentionBlock, attentionDecode, attentionDecodeScratchBytes, attentionPack, attentionParamsBytes, attentionRun, attentionScratchBytes } from "./attention";
export { layerNorm } from "./layer-norm";
export { gelu, geluStrided } from "./gelu";
export { add } from "./add";
export { mul } from "./mul";
export { rmsNorm, rmsNormGrad, rmsNormWeightGrad } from "./rms-norm";
export { addLayerNorm } from "./add-layer-norm";
export { embedding } from "./embedding";
export { crossEntropy } from "./cross-entropy";
// Backward ops.
export { pad, sumTo, sumToInner, zero } from "./sum-to";
export { transposeRows } from "./transpose";
export { maskGrad, softmaxGrad } from "./softmax-grad";
export { attentionGradBlock, attentionGradFlush, attentionGradPack, attentionGradParamsBytes, attentionGradRun, attentionGradScratchBytes } from "./attention-grad";
export { f64ToF32, layerNormGrad, layerNormWeightGrad } from "./layer-norm-grad";
export { geluGrad, geluGradStrided } from "./gelu-grad";
export { embeddingGrad } from "./embedding-grad";
export { crossEntropyGrad } from "./cross-entropy-grad";
// Optimizer updates.
export { adamMoment, adamMomentStrided, adamStep, adamStepStrided } from "./adam";
export { sgdMomentum, sgdMomentumStrided, sgdStep, sgdStepStrided } from "./sgd";
// Global gradient-norm clipping and gradient accumulation.
export { accumulateScaled, scaleBy, sumSquares } from "./grad-norm";

/** First free byte after the module's static data (the 4×8 edge tile). */
export function heapBase(): usize {
  return __heap_base;
}
// Score and mask modifications in the fused attention (the program's registers, for the host's sizes and checks).
export { exprClearStatus, exprPointwise, exprRegsBytes } from "./expr-program";
// The built-in elementwise ops rendered from their expressions at build time (src/pointwise-as.ts).
export * from "./generated/pointwise";
