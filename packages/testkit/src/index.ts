export { parseCase, type GoldenCase } from "./golden/case.js";
export {
  loadCase,
  loadAnyCase,
  listCases,
  goldenDir,
  goldenGradDir,
  goldenTrainDir,
  goldenFlexDir,
  goldenModelsDir,
  goldenModelsExtraDir,
  quotedErrorText,
} from "./golden/load.js";
export {
  parseTrainCase,
  isTrainCaseJSON,
  TRAIN_CASE_KINDS,
  type TrainCase,
  type TrainCaseKind,
  type TrainingSpec,
} from "./golden/train-case.js";
export { CaseFormatError } from "./golden/errors.js";
export { isFlexCaseJSON, parseFlexCase, type FlexCase } from "./golden/flex-case.js";
export { isModelCaseJSON, parseModelCase, type ModelCase, type ModelTraining } from "./golden/model-case.js";
export { flexGraphCase } from "./golden/flex-graph-case.js";
export { attentionGraphCase, gradientsNotChecked, TRAIN_FORWARD_NODES, type GraphCase } from "./golden/graph-case.js";
export { referenceAttention, type Position64, type ReferenceName, type TensorLike } from "./reference/attention64.js";
export { alibi64, alibiSlopes64, type Alibi64 } from "./reference/alibi64.js";
export { rope64, type Rope64 } from "./reference/rope64.js";
export { referenceDropout, referenceDropoutBits, referenceDropoutKeep } from "./reference/dropout64.js";
export {
  linear64,
  splitHeads64,
  mergeHeads64,
  kvHead,
  score64,
  mask64,
  softmax64,
  weightedSum64,
  type HeadDims,
  type Mask64,
  type Tensor64,
} from "./reference/ops64.js";
export {
  add64,
  crossEntropy64,
  embedding64,
  erf64,
  gelu64,
  layerNorm64,
  maskFull64,
  relu64,
  type UserMask64,
} from "./reference/block64.js";
export { mulberry32 } from "./prng.js";
export { randomTensor } from "./random-tensor.js";
export { mul64, rmsNorm64, rmsNormGrad64, rmsNormWeightGrad64, silu64, siluGrad64 } from "./reference/llama64.js";
// backward64.ts exports the backward references and nothing else, all of them public.
export * from "./reference/backward64.js";
export {
  attentionGrad64,
  attentionLse64,
  attentionOut64,
  type AttentionProblem64,
} from "./reference/attention-grad64.js";
export { flexForward64, flexGrad64, type Flex64 } from "./reference/flex64.js";
export {
  attentionGradProblem,
  type AttentionGradCase,
  type AttentionGradProblem,
} from "./reference/attention-grad-case.js";
export { clipGradNorm64 } from "./reference/clip64.js";
export {
  adamMoment64,
  adamStep64,
  sgdMomentum64,
  sgdStep64,
  type AdamMoment64,
  type AdamStep64,
  type SgdMomentum64,
  type SgdStep64,
} from "./reference/optim64.js";
export { withPlantedError } from "./plant-error.js";
export { dropoutProbe } from "./dropout-probe.js";
export { WHERE3_EXPR, where3 } from "./pointwise-where.js";
export { checkGoldenSession, type PageGoldenCase, type PageResult, type PageSession } from "./golden/session-check.js";
export { KV_SENTINEL, kvAppendCall, kvConcat, sentinelTensor } from "./kv-append-case.js";
export { positionCases, tableRows } from "./position-rows.js";
export {
  ADAM_LOOPS,
  ADAM_STEP_CASES,
  BAD_STEP_VALUES,
  SGD_LOOPS,
  SGD_MOMENTUM_CASES,
  SGD_STEP_CASES,
  adamStepCase64,
  sgdLoopLabel,
  sgdMomentumCase64,
  sgdStepCase64,
  torchAdamLoop,
  torchSgdLoop,
  type AdamStepCase,
  type SgdLoop,
  type SgdMomentumCase,
  type SgdStepCase,
} from "./contract/optim-kernel-cases.js";
export {
  chunkedForwardCalls,
  seededHeads,
  type ChunkedCall,
  type ChunkedInputs,
  type SeededRandom,
} from "./contract/chunked-calls.js";
export { abortLater } from "./contract/abort-later.js";
export { attentionGradInputs } from "./contract/attention-grad-inputs.js";
export {
  attentionGradTensors,
  gradsByWrt,
  type AttentionGradTensors,
  type QkvWrt,
} from "./reference/attention-grad-tensors.js";
export { crossEntropyGradOf } from "./reference/cross-entropy-grad-of.js";
export { eachStrided, stridedOperands } from "./contract/each-strided.js";
export { valuesOf, type SyncExecutor, type ValueExecutor } from "./contract/value-executor.js";
export { goldenByKernels } from "./golden/kernel-chain.js";
export { adamMomentCase64, type AdamMomentCase } from "./contract/adam-moment-case.js";
export { elementwiseUserOp, softcapOp, type SoftcapAttrs, type UserOpExtras } from "./user-ops.js";
