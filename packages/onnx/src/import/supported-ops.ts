// The op types importOnnx builds, by domain. A file using any other is refused up front, every such type named at
// once with its count (OnnxUnsupportedOpsError), before anything is built.
import { HOST_OPS } from "./host-ops.js";

/** Built as attngraph nodes (lower-ops.ts) or inside a recognised pattern (patterns/*.ts). */
const RUNTIME_OPS = [
  "Constant",
  "Shape",
  "Size",
  "MatMul",
  "Gemm",
  "Softmax",
  "LayerNormalization",
  "ReduceMean",
  "Relu",
  "Gelu",
  "Dropout",
  "Flatten",
  "Split",
  "Squeeze",
  "Unsqueeze",
  "Reshape",
  "Transpose",
  "Slice",
  "Gather",
  "Cast",
  "Expand",
  "Where",
  // Cross-entropy: exportOnnx's form (patterns/cross-entropy.ts) and ONNX's own op.
  "GatherElements",
  "ReduceMax",
  "ReduceSum",
  "SoftmaxCrossEntropyLoss",
];

export const SUPPORTED_OPS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["", new Set([...Object.keys(HOST_OPS), ...RUNTIME_OPS])],
  [
    "com.microsoft",
    new Set(["Gelu", "FastGelu", "BiasGelu", "SkipLayerNormalization", "Attention", "MultiHeadAttention"]),
  ],
]);

/** The default domain's opsets whose ops read as the importer reads them (axes as inputs from 13 on). */
export const OPSET_RANGE = { min: 13, max: 21 } as const;

export function isSupported(domain: string, opType: string): boolean {
  return SUPPORTED_OPS.get(domain === "ai.onnx" ? "" : domain)?.has(opType) ?? false;
}
