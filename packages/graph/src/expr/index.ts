export type { Expr, ExprCall, ExprInput, ExprOpName, ExprType, ExprVar } from "./types.js";
export { isCall, isInput, POSITION_VARS } from "./types.js";
export { EXPR_OPS, EXPR_OP_NAMES, pyMod, sigmoid, type ExprOpSpec } from "./ops.js";
export { checkExpr, checkExprCached, inputsRead, type CheckedExpr, type ExprScope } from "./check.js";
export {
  compileExpr,
  ExprIndexError,
  readSites,
  type CompileOptions,
  type ExprFn,
  type GatheredTensor,
} from "./compile.js";
export { derive, treeSize, type Wrt } from "./derive.js";
export { gatheredOfCall, inputGradTarget } from "./gathered-call.js";
export { exprRows, inputGradRows, type F32View } from "./host-kernels.js";
export { unprovedReads, type VarSizes } from "./bounds.js";
export { renameReads } from "./rename.js";
export { compileMods, type CompiledMods } from "./attention-mods-host.js";
export { attentionInputGrad, type AttentionGradViews } from "./attention-input-grad.js";
export { formatExpr } from "./format.js";
export { alibiScoreMod, documentCausalMask, softCap } from "./mods.js";
export {
  BLOCK_ALL,
  BLOCK_NONE,
  BLOCK_SOME,
  BlockClasses,
  classifyBlock,
  varsRead,
  type BlockClass,
} from "./block-class.js";
export { Intervals, type VarRanges } from "./intervals.js";
export {
  checkPointwise,
  compilePointwise,
  elementOf,
  elementsRead,
  exprKey,
  pointwiseScope,
  pointwiseVjpExpr,
  POINTWISE_SLOTS,
  type PointwiseFn,
} from "./pointwise.js";
