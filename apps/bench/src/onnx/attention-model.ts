// The ONNX model of the benchmark's attention, built in JS: the same causal multi-head attention with out_proj (bias)
// that attngraph's multiHeadAttention builds, on a fixed shape, with the problem's weights as initializers.
//
//   x [b, T, d] ─MatMul W_qᵀ→ q ─Reshape [0,0,H,D]→ Transpose (0,2,1,3) → qh [b, H, T, D]
//               ─MatMul W_kᵀ→ k ─Reshape─────────→ Transpose (0,2,3,1) → khT [b, H, D, T]
//               ─MatMul W_vᵀ→ v ─Reshape─────────→ Transpose (0,2,1,3) → vh [b, H, T, D]
//   scores = MatMul(qh, khT) · scale + causal_mask [T, T] (0 / −∞) → Softmax(axis −1) → MatMul vh → [b, H, T, D]
//   → Transpose (0,2,1,3) → Reshape [0,0,d] → MatMul W_oᵀ → Add b_o → y [b, T, d]
//
// Plain opset-17 ops only (no com.microsoft contrib ops), so onnxruntime's optimizer decides what to fuse.
import { causalMask, transpose2d, type Problem } from "../problem.js";
import type { BenchShape } from "../shapes.js";
import {
  encodeModel,
  floatTensor,
  floatValueInfo,
  int64Tensor,
  node,
  type NodeMsg,
  type TensorMsg,
} from "@attngraph/onnx";

/** Input and output names of the model. */
export const ONNX_INPUT = "x";
export const ONNX_OUTPUT = "y";

/**
 * The nodes from projected q, k, v [b, T, d] to the merged context [b, T, d]: heads split, scores · scale + causal
 * mask, Softmax, weighted sum, heads merged. They read the initializers of attentionCoreInitializers.
 */
export function attentionCoreNodes(q: string, k: string, v: string, context: string): NodeMsg[] {
  const split = (src: string, name: string, perm: number[]) => [
    node("Reshape", `${name}.split`, [src, "heads_shape"], [`${name}.split`]),
    node("Transpose", `${name}.heads`, [`${name}.split`], [`${name}.heads`], { perm }),
  ];
  return [
    ...split(q, "q", [0, 2, 1, 3]), // [b, H, T, D]
    ...split(k, "kT", [0, 2, 3, 1]), // [b, H, D, T]
    ...split(v, "v", [0, 2, 1, 3]), // [b, H, T, D]
    node("MatMul", "scores", ["q.heads", "kT.heads"], ["scores"]), // [b, H, T, T]
    node("Mul", "scaled", ["scores", "scale"], ["scaled"]),
    node("Add", "masked", ["scaled", "causal_mask"], ["masked"]),
    node("Softmax", "weights", ["masked"], ["weights"], { axis: -1 }),
    node("MatMul", "context.heads", ["weights", "v.heads"], ["context.heads"]), // [b, H, T, D]
    node("Transpose", "context.merge", ["context.heads"], ["context.merge"], { perm: [0, 2, 1, 3] }), // [b, T, H, D]
    node("Reshape", context, ["context.merge", "model_shape"], [context]), // [b, T, d]
  ];
}

/** The constants attentionCoreNodes reads: scale, causal_mask [T, T], and the two Reshape targets. */
export function attentionCoreInitializers(p: { readonly shape: BenchShape; readonly scale: number }): TensorMsg[] {
  const { t, d, h } = p.shape;
  return [
    floatTensor("scale", [], Float32Array.of(p.scale)),
    floatTensor("causal_mask", [t, t], causalMask(t)),
    int64Tensor("heads_shape", [0, 0, h, d / h]), // 0 = keep that dim (b, T)
    int64Tensor("model_shape", [0, 0, d]),
  ];
}

/**
 * The attention's weights as initializers, transposed to [in, out] for MatMul: W_query_T, W_key_T, W_value_T,
 * out_proj_T [d, d] and out_bias [d] (the attention and decode models share them).
 */
export function attentionWeightInitializers(p: Pick<Problem, "shape" | "wq" | "wk" | "wv" | "wo" | "bo">): TensorMsg[] {
  const { d } = p.shape;
  return [
    floatTensor("W_query_T", [d, d], transpose2d(p.wq, d, d)),
    floatTensor("W_key_T", [d, d], transpose2d(p.wk, d, d)),
    floatTensor("W_value_T", [d, d], transpose2d(p.wv, d, d)),
    floatTensor("out_proj_T", [d, d], transpose2d(p.wo, d, d)),
    floatTensor("out_bias", [d], p.bo),
  ];
}

/** The Q, K and V projections of the input `x`, by the initializers of attentionWeightInitializers, into q, k, v. */
export function projectionNodes(q: string, k: string, v: string): NodeMsg[] {
  return [
    node("MatMul", q, [ONNX_INPUT, "W_query_T"], [q]),
    node("MatMul", k, [ONNX_INPUT, "W_key_T"], [k]),
    node("MatMul", v, [ONNX_INPUT, "W_value_T"], [v]),
  ];
}

/** out_proj and its bias, from `context` to the output `y`. */
export function outProjNodes(context: string): NodeMsg[] {
  return [
    node("MatMul", "output.matmul", [context, "out_proj_T"], ["output.matmul"]),
    node("Add", "output", ["output.matmul", "out_bias"], [ONNX_OUTPUT]),
  ];
}

/** The model's bytes for this problem (weights included). */
export function buildAttentionModel(p: Problem): Uint8Array {
  const { b, t, d, h } = p.shape;
  const nodes = [
    ...projectionNodes("queries", "keys", "values"),
    ...attentionCoreNodes("queries", "keys", "values", "context"),
    ...outProjNodes("context"),
  ];
  const initializers = [...attentionWeightInitializers(p), ...attentionCoreInitializers(p)];
  return encodeModel({
    graphName: "causal_mha",
    producerName: "@attngraph/bench",
    nodes,
    initializers,
    inputs: [floatValueInfo(ONNX_INPUT, [b, t, d])],
    outputs: [floatValueInfo(ONNX_OUTPUT, [b, t, d])],
    docString: `causal multi-head attention with out_proj, b=${b} T=${t} d=${d} heads=${h}`,
  });
}
