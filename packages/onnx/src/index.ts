export { exportOnnx, exportOnnxWithReport, ONNX_OPSET, CONTRIB_OPSET, type ExportOptions } from "./export.js";
export { modelWeights } from "./decode-caches.js";
export { formatExportReport, type ExportReport, type NodeExport } from "./report.js";
export { OnnxExportError } from "./errors.js";
export { LOWERINGS } from "./ops/index.js";
export type { DimRef, Lowering, OpLowering } from "./lowering.js";
// The protobuf subset of onnx.proto and its writers, for models built by hand (the bench's reference models).
export {
  DataType,
  decodeModel,
  doubleTensor,
  encodeModel,
  floatTensor,
  floatValueInfo,
  int32Tensor,
  int64Tensor,
  node,
  valueInfo,
} from "./proto/proto.js";
export type { AttrValue, InfoDim, ModelParts, NodeMsg, OpsetImport, TensorMsg, ValueInfoMsg } from "./proto/proto.js";
export { importOnnx, type ImportOptions, type ImportedOnnx, type ImportedInput } from "./import/import-onnx.js";
export { ImportReport } from "./import/import-report.js";
export { OnnxImportError, OnnxUnsupportedOpsError, type UnsupportedOp } from "./import/import-error.js";
export { SUPPORTED_OPS } from "./import/supported-ops.js";
