// The built-in op kinds, in one explicit list. Adding an op means adding its file and one line here; nothing registers
// itself on import.
import type { AnyOpDef } from "../op-def.js";
import { addOp } from "./add.js";
import { addLayerNormOp } from "./add-layer-norm.js";
import { linearGeluOp } from "./linear-gelu.js";
import { alibiOp } from "./alibi.js";
import { crossEntropyOp } from "./cross-entropy.js";
import { embeddingOp } from "./embedding.js";
import { positionEmbeddingOp } from "./position-embedding.js";
import { geluOp } from "./gelu.js";
import { reluOp } from "./relu.js";
import { siluOp } from "./silu.js";
import { pointwiseOp } from "./pointwise.js";
import { mulOp } from "./mul.js";
import { rmsNormOp } from "./rms-norm.js";
import { layerNormOp } from "./layer-norm.js";
import { attentionOp } from "./attention.js";
import { attentionGradOp, attentionLseOp } from "./attention-grad.js";
import { dropoutOp } from "./dropout.js";
import { maskOp } from "./mask.js";
import { maskModOp } from "./mask-mod.js";
import { scoreModInputGradOp, scoreModOp } from "./score-mod.js";
import { outProjOp } from "./out-proj.js";
import { projectionOp } from "./projection.js";
import { reshapeOp } from "./reshape.js";
import { ropeOp } from "./rope.js";
import { kvAppendOp } from "./kv-append.js";
import { scoreOp } from "./score.js";
import { sliceOp } from "./slice.js";
import { softmaxOp } from "./softmax.js";
import { transposeOp } from "./transpose.js";
import { weightedSumOp } from "./weighted-sum.js";

import { adamMomentOp, adamStepOp } from "./adam.js";
import { sgdMomentumOp, sgdStepOp } from "./sgd.js";
import { clipByNormOp, sumSquaresOp } from "./grad-norm.js";
import { gradAccumulateOp } from "./grad-accumulate.js";
import { crossEntropyGradOp } from "./cross-entropy-grad.js";
import { embeddingGradOp } from "./embedding-grad.js";
import { positionEmbeddingGradOp } from "./position-embedding-grad.js";
import { geluGradOp } from "./gelu-grad.js";
import { rmsNormGradOp, rmsNormWeightGradOp } from "./rms-norm-grad.js";
import { layerNormGradOp, layerNormWeightGradOp } from "./layer-norm-grad.js";
import { linearWeightGradOp } from "./linear-weight-grad.js";
import { maskGradOp } from "./mask-grad.js";
import { padOp } from "./pad.js";
import { softmaxGradOp } from "./softmax-grad.js";
import { sumToOp } from "./sum-to.js";

export const builtinOps: readonly AnyOpDef[] = [
  projectionOp,
  reshapeOp,
  transposeOp,
  sliceOp,
  ropeOp,
  scoreOp,
  alibiOp,
  // Score and mask modifications as expressions (FlexAttention's score_mod and mask_mod as data).
  scoreModOp,
  maskModOp,
  maskOp,
  softmaxOp,
  dropoutOp,
  weightedSumOp,
  outProjOp,
  attentionOp,
  // Incremental decoding: the key/value cache a decode session keeps between calls.
  kvAppendOp,
  // Beyond attention: the ops of a transformer block and its loss.
  layerNormOp,
  geluOp,
  reluOp,
  addOp,
  // The ops of a Llama block: RMSNorm and the SiLU-gated MLP (silu(gate) · up).
  rmsNormOp,
  siluOp,
  mulOp,
  // Any elementwise expression (what a pointwise-declared op such as silu lowers to, and its derived gradients).
  pointwiseOp,
  embeddingOp,
  positionEmbeddingOp,
  crossEntropyOp,
  // Fused block ops: what the scheduler's block fusion puts in place of projection → gelu and add → layer-norm.
  linearGeluOp,
  addLayerNormOp,
  // Backward ops: what grad() (@attngraph/autodiff) adds where composing forward ops would be slow or imprecise.
  sumToOp,
  padOp,
  linearWeightGradOp,
  softmaxGradOp,
  maskGradOp,
  scoreModInputGradOp,
  layerNormGradOp,
  layerNormWeightGradOp,
  geluGradOp,
  rmsNormGradOp,
  rmsNormWeightGradOp,
  embeddingGradOp,
  positionEmbeddingGradOp,
  crossEntropyGradOp,
  // The fused attention backward: what the scheduler's backward fusion puts in place of the chain's rules.
  attentionLseOp,
  attentionGradOp,
  // Optimizer updates: what a training step adds after the gradients (@attngraph/train).
  adamMomentOp,
  adamStepOp,
  sgdMomentumOp,
  sgdStepOp,
  // Global gradient-norm clipping (clip_grad_norm_), between the gradients and the optimizer's update.
  sumSquaresOp,
  clipByNormOp,
  // Gradient accumulation over microbatches (the trainer's `accumulate`).
  gradAccumulateOp,
];

// What the package exports of each op file (everything else in them is internal).
export { addOp, type AddAttrs } from "./add.js";
export { addLayerNormOp, type AddLayerNormAttrs } from "./add-layer-norm.js";
export { linearGeluOp, type LinearGeluAttrs } from "./linear-gelu.js";
export { alibiOp, type AlibiAttrs, alibiSlopes } from "./alibi.js";
export { crossEntropyOp, type CrossEntropyAttrs } from "./cross-entropy.js";
export { embeddingOp, type EmbeddingAttrs } from "./embedding.js";
export { positionEmbeddingOp, type PositionEmbeddingAttrs } from "./position-embedding.js";
export { geluOp, type GeluAttrs } from "./gelu.js";
export { reluOp } from "./relu.js";
export { siluOp } from "./silu.js";
export {
  definePointwiseOp,
  pointwiseCallExpr,
  pointwiseGrad,
  pointwiseExprOf,
  pointwiseOp,
  type PointwiseAttrs,
  type PointwiseOpSpec,
} from "./pointwise.js";
export { mulOp, type MulAttrs } from "./mul.js";
export { rmsNormOp, type RmsNormAttrs } from "./rms-norm.js";
export { layerNormOp, type LayerNormAttrs } from "./layer-norm.js";
export { attentionOp, type AttentionAttrs } from "./attention.js";
export {
  type AttentionGradAttrs,
  type AttentionGradWrt,
  type AttentionLseAttrs,
  ATTENTION_GRAD_WRT,
  attentionGradOp,
  attentionLseOp,
} from "./attention-grad.js";
export { dropoutOp, type DropoutAttrs } from "./dropout.js";
export { USER_MASK_AXES, maskOp, type MaskAttrs, type MaskGeometry } from "./mask.js";
export { maskModOp, type MaskModAttrs } from "./mask-mod.js";
export {
  scoreModInputGradOp,
  scoreModOp,
  type ScoreModAttrs,
  type ScoreModInputGradAttrs,
  scoreModGradStep,
} from "./score-mod.js";
export { outProjOp, type OutProjAttrs } from "./out-proj.js";
export { projectionOp, type ProjectionAttrs } from "./projection.js";
export { reshapeOp, type ReshapeAttrs } from "./reshape.js";
export { ropeOp, type RopeAttrs } from "./rope.js";
export { DECODE_DIMS, type KvAppendAttrs } from "./kv-append.js";
export { scoreOp, type ScoreAttrs } from "./score.js";
export { sliceOp, sliceStart, type SliceAttrs } from "./slice.js";
export { softmaxOp, type SoftmaxAttrs } from "./softmax.js";
export { transposeOp, type TransposeAttrs } from "./transpose.js";
export { weightedSumOp, type WeightedSumAttrs } from "./weighted-sum.js";
export { adamMomentOp, adamStepOp, type AdamMomentAttrs, type AdamStepAttrs } from "./adam.js";
export { sgdMomentumOp, sgdStepOp, type SgdMomentumAttrs, type SgdStepAttrs } from "./sgd.js";
export { clipByNormOp, sumSquaresOp, type ClipByNormAttrs } from "./grad-norm.js";
export { gradAccumulateOp, type GradAccumulateAttrs } from "./grad-accumulate.js";
export { crossEntropyGradOp, type CrossEntropyGradAttrs } from "./cross-entropy-grad.js";
export { embeddingGradOp, type EmbeddingGradAttrs } from "./embedding-grad.js";
export { positionEmbeddingGradOp, type PositionEmbeddingGradAttrs } from "./position-embedding-grad.js";
export { geluGradOp, type GeluGradAttrs } from "./gelu-grad.js";
export { rmsNormGradOp, rmsNormWeightGradOp, type RmsNormGradAttrs } from "./rms-norm-grad.js";
export { layerNormGradOp, layerNormWeightGradOp, type LayerNormGradAttrs } from "./layer-norm-grad.js";
export { linearWeightGradOp, type LinearWeightGradAttrs } from "./linear-weight-grad.js";
export { maskGradOp, type MaskGradAttrs } from "./mask-grad.js";
export { padOp, type PadAttrs } from "./pad.js";
export { softmaxGradOp, type SoftmaxGradAttrs } from "./softmax-grad.js";
export { sumToOp, type SumToAttrs } from "./sum-to.js";
export { GATHERED_SLOTS, MAX_GATHERED, gatheredInputs } from "./gathered.js";
export { hasMods, MOD_ATTRS, type AttentionMods } from "./attention-mods.js";
