// The ONNX model of the benchmark's transformer block (--problem block), built in JS like the attention model: the
// worked example's pre-norm block that attngraph's transformerBlock builds, on a fixed shape, with the problem's
// weights as initializers (named by their state_dict keys, transposed to [in, out] for MatMul where marked _T).
//
//   x [b, T, d] ─LayerNormalization(ln1.weight, ln1.bias)→ ln1
//   ln1 ─MatMul qkv_proj_T [d, 3d]→ qkv ─Split (axis −1, d, d, d)→ q, k, v
//   q, k, v → the attention model's core (heads, scores · scale + causal mask, Softmax, weighted sum, heads merged)
//   → context ─MatMul out_proj_T→ attention;  residual = Add(x, attention)
//   residual ─LayerNormalization(ln2.*)→ ln2 ─MatMul mlp.0_T, Add mlp.0.bias→ mlp.hidden [b, T, 4d]
//   GELU, erf form as PyTorch exports it: h · 0.5 · (1 + Erf(h / √2)) → mlp.gelu
//   mlp.gelu ─MatMul mlp.2_T, Add mlp.2.bias→ mlp;  y = Add(residual, mlp)
//
// Plain opset-17 ops only (LayerNormalization is in the default domain from opset 17; no com.microsoft contrib ops),
// so onnxruntime's optimizer decides what to fuse (it recognises the Div/Erf/Add/Mul/Mul chain as Gelu).
import { blockStateDict, MLP_RATIO, transpose2d, type BlockProblem } from "../problem.js";
import { attentionCoreInitializers, attentionCoreNodes, ONNX_INPUT, ONNX_OUTPUT } from "./attention-model.js";
import { encodeModel, floatTensor, floatValueInfo, int64Tensor, node } from "@attngraph/onnx";

export { ONNX_INPUT, ONNX_OUTPUT };

/** The model's bytes for this block problem (weights included). */
export function buildBlockModel(p: BlockProblem): Uint8Array {
  const { b, t, d, h } = p.shape;
  const hidden = MLP_RATIO * d;
  const sd = blockStateDict(p);
  const layerNorm = (name: string, input: string) =>
    node("LayerNormalization", name, [input, `${name}.weight`, `${name}.bias`], [name], { axis: -1, epsilon: p.eps });
  const nodes = [
    layerNorm("ln1", ONNX_INPUT),
    node("MatMul", "attention.qkv", ["ln1", "attention.qkv_proj.weight_T"], ["attention.qkv"]), // [b, T, 3d]
    node("Split", "attention.split", ["attention.qkv", "qkv_split"], ["queries", "keys", "values"], { axis: -1 }),
    ...attentionCoreNodes("queries", "keys", "values", "context"),
    node("MatMul", "attention", ["context", "attention.out_proj.weight_T"], ["attention"]),
    node("Add", "residual", [ONNX_INPUT, "attention"], ["residual"]),
    layerNorm("ln2", "residual"),
    node("MatMul", "mlp.hidden.matmul", ["ln2", "mlp.0.weight_T"], ["mlp.hidden.matmul"]),
    node("Add", "mlp.hidden", ["mlp.hidden.matmul", "mlp.0.bias"], ["mlp.hidden"]), // [b, T, 4d]
    node("Div", "mlp.gelu.scaled", ["mlp.hidden", "sqrt2"], ["mlp.gelu.scaled"]),
    node("Erf", "mlp.gelu.erf", ["mlp.gelu.scaled"], ["mlp.gelu.erf"]),
    node("Add", "mlp.gelu.one_plus", ["mlp.gelu.erf", "one"], ["mlp.gelu.one_plus"]),
    node("Mul", "mlp.gelu.times_x", ["mlp.hidden", "mlp.gelu.one_plus"], ["mlp.gelu.times_x"]),
    node("Mul", "mlp.gelu", ["mlp.gelu.times_x", "half"], ["mlp.gelu"]),
    node("MatMul", "mlp.matmul", ["mlp.gelu", "mlp.2.weight_T"], ["mlp.matmul"]),
    node("Add", "mlp", ["mlp.matmul", "mlp.2.bias"], ["mlp"]),
    node("Add", "output", ["residual", "mlp"], [ONNX_OUTPUT]),
  ];
  const vector = (name: string) => floatTensor(name, sd[name]!.shape, sd[name]!.data);
  const initializers = [
    vector("ln1.weight"),
    vector("ln1.bias"),
    floatTensor("attention.qkv_proj.weight_T", [d, 3 * d], transpose2d(p.wqkv, 3 * d, d)),
    int64Tensor("qkv_split", [d, d, d]),
    floatTensor("attention.out_proj.weight_T", [d, d], transpose2d(p.wo, d, d)),
    vector("ln2.weight"),
    vector("ln2.bias"),
    floatTensor("mlp.0.weight_T", [d, hidden], transpose2d(p.w1, hidden, d)),
    vector("mlp.0.bias"),
    floatTensor("mlp.2.weight_T", [hidden, d], transpose2d(p.w2, d, hidden)),
    vector("mlp.2.bias"),
    floatTensor("sqrt2", [], Float32Array.of(Math.SQRT2)),
    floatTensor("one", [], Float32Array.of(1)),
    floatTensor("half", [], Float32Array.of(0.5)),
    ...attentionCoreInitializers(p),
  ];
  return encodeModel({
    graphName: "transformer_block",
    producerName: "@attngraph/bench",
    nodes,
    initializers,
    inputs: [floatValueInfo(ONNX_INPUT, [b, t, d])],
    outputs: [floatValueInfo(ONNX_OUTPUT, [b, t, d])],
    docString: `pre-norm transformer block (causal MHA with fused qkv_proj, GELU MLP ${MLP_RATIO}·d), b=${b} T=${t} d=${d} heads=${h}`,
  });
}
