export { GraphBuilder, insertAfter, type Ref } from "./builder.js";
export { OpGraph, type GraphNode, type GraphParts, type NodeSpec, type ValueDecl } from "./graph.js";
export type { ValueInfo } from "./infer-node.js";
export { OpRegistry, createOpRegistry, kernelKinds } from "./registry.js";
export { attrsOf, builtinOpDef, checkCall, type CallValue } from "./check-call.js";
export {
  defineOp,
  normalizeAttrs,
  inferShape,
  makeContext,
  type OpDef,
  type AnyOpDef,
  type OpInput,
  type AttrSpec,
  type AttrType,
  type OpContext,
} from "./op-def.js";
export type { VjpContext, VjpRule } from "./vjp.js";
export { fromJSON, toJSON, GRAPH_FORMAT, GRAPH_FORMAT_VERSION, type GraphJSON } from "./json.js";
export { broadcastShapes, broadcastStrides } from "./broadcast.js";
export { FLOAT32_MAX } from "./float32.js";
export { sameDim, sameSize, formatDims, isConcrete, bindDims, type Dim, type SymShape } from "./dims.js";
export { GraphValidationError, GraphFormatError } from "./errors.js";
export type { Arena, Executor, KernelCall, Support } from "./executor-contract.js";
export * from "./ops/index.js";
export { dropoutBits, dropoutKeep, dropoutSeedAt, dropoutThreshold, fmix32, mixedBits } from "./ops/dropout-hash.js";
export {
  attrError,
  dtypeError,
  findBadIndex,
  findNonBinary,
  kernelInputError,
  multiIndex,
  nonBinaryMaskError,
  userMaskStrides,
  type Strided,
  expectDim,
  expectHeadGroups,
  expectRank,
  maskOffset,
  windowOf,
  type CallInfo,
  type Shaped,
} from "./kernel-checks.js";
export {
  checkSumToShape,
  expectSameShape,
} from "./kernel-checks-backward.js";
export {
  checkLrScaleValue,
  checkOptimizerStepValue,
} from "./kernel-checks-optim.js";
export { checkKvAppend } from "./kernel-checks-attention.js";
export { KernelTable } from "./kernel-table.js";
export * from "./chunks.js";
export * from "./expr/index.js";
export { checkKvAppendApart, checkReshapeSize, keyPaddingError } from "./kernel-checks-executor.js";
