// The built-in op kinds, in one explicit list. Adding an op means adding its file and one line here; nothing registers
// itself on import.
import type { AnyOpDef } from "../op-def.js";
import { alibiOp } from "./alibi.js";
import { attentionOp } from "./attention.js";
import { dropoutOp } from "./dropout.js";
import { maskOp } from "./mask.js";
import { outProjOp } from "./out-proj.js";
import { projectionOp } from "./projection.js";
import { reshapeOp } from "./reshape.js";
import { ropeOp } from "./rope.js";
import { scoreOp } from "./score.js";
import { sliceOp } from "./slice.js";
import { softmaxOp } from "./softmax.js";
import { transposeOp } from "./transpose.js";
import { weightedSumOp } from "./weighted-sum.js";

export const builtinOps: readonly AnyOpDef[] = [
  projectionOp,
  reshapeOp,
  transposeOp,
  sliceOp,
  ropeOp,
  scoreOp,
  alibiOp,
  maskOp,
  softmaxOp,
  dropoutOp,
  weightedSumOp,
  outProjOp,
  attentionOp,
];

export { alibiOp, attentionOp, dropoutOp, maskOp, outProjOp, projectionOp, reshapeOp, ropeOp, scoreOp, sliceOp, softmaxOp, transposeOp, weightedSumOp };
export type { AlibiAttrs } from "./alibi.js";
export type { AttentionAttrs } from "./attention.js";
export type { DropoutAttrs } from "./dropout.js";
export type { MaskAttrs } from "./mask.js";
export type { OutProjAttrs } from "./out-proj.js";
export type { ProjectionAttrs } from "./projection.js";
export type { ReshapeAttrs } from "./reshape.js";
export type { RopeAttrs } from "./rope.js";
export type { ScoreAttrs } from "./score.js";
export type { SliceAttrs } from "./slice.js";
export type { SoftmaxAttrs } from "./softmax.js";
export type { TransposeAttrs } from "./transpose.js";
export type { WeightedSumAttrs } from "./weighted-sum.js";
