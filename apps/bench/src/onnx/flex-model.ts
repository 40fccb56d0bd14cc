// The ONNX models of `--problem flex`: each variant as plain opset-17 ops, so onnxruntime's optimizer decides what to
// fuse. Its best plain form: every mask and bias is one constant additive tensor (0 / −∞, with ALiBi's m_h·(j − i)
// folded in), built at setup like the default problem's causal mask, so a run is one Add between scale and Softmax.
//
//   core:  q, k, v [b, H, T, D];  kT = Transpose(k, 0,1,3,2)
//   layer: x → MatMul W_{q,k,v}ᵀ → Reshape [0,0,H,D] → Transpose → qh, kT, vh (as the default problem's model)
//   scores = MatMul(q, kT) · scale  [→ Div cap → Tanh → Mul cap (softcap)]  + bias → Softmax → MatMul v
//   layer: → Transpose → Reshape [0,0,d] → MatMul out_projᵀ → Add out_bias → y
import {
  encodeModel,
  floatTensor,
  floatValueInfo,
  int64Tensor,
  node,
  type NodeMsg,
  type TensorMsg,
} from "@attngraph/onnx";
import { flexGathered, type FlexProblem } from "../flex/problem.js";
import { alibiSlopes, type FlexPart, type FlexVariant } from "../flex/variants.js";
import {
  attentionWeightInitializers,
  ONNX_INPUT,
  ONNX_OUTPUT,
  outProjNodes,
  projectionNodes,
} from "./attention-model.js";

/** The core model's inputs (the layer's is ONNX_INPUT, x). */
export const FLEX_CORE_INPUTS = ["q", "k", "v"] as const;

/**
 * The variant's additive bias: 0 where a key is seen, −∞ where not, plus ALiBi's slope · (kv − q); [T, T] shared by
 * every batch and head, [1, H, T, T] for ALiBi (per head), [b, 1, T, T] for documents (per batch row).
 */
export function flexBias(p: FlexProblem, variant: FlexVariant): { data: Float32Array; dims: number[] } {
  const { b, t, h } = p.shape;
  const doc = variant === "document" ? flexGathered(p, { gathered: ["doc"] }).doc!.data : undefined;
  const mask = variant === "user-mask" ? flexGathered(p, { gathered: ["mask"] }).mask!.data : undefined;
  const slopes = variant === "alibi" ? alibiSlopes(h) : undefined;
  const [outer, dims] = slopes ? [h, [1, h, t, t]] : doc ? [b, [b, 1, t, t]] : [1, [t, t]];
  const data = new Float32Array(outer * t * t);
  for (let o = 0; o < outer; o++) {
    for (let q = 0; q < t; q++) {
      for (let kv = 0; kv < t; kv++) {
        let seen = kv <= q;
        if (variant === "window") seen &&= q - kv < p.constants.window;
        if (mask) seen &&= mask[q * t + kv] !== 0;
        if (doc) seen &&= doc[o * t + q] === doc[o * t + kv];
        data[(o * t + q) * t + kv] = !seen ? -Infinity : slopes ? slopes[o]! * (kv - q) : 0;
      }
    }
  }
  return { data, dims };
}

/** scores → scale → [softcap] → + bias → Softmax → weighted sum, from heads qh, kT, vh to `out` [b, H, T, D]. */
function coreNodes(variant: FlexVariant, qh: string, kT: string, vh: string, out: string): NodeMsg[] {
  const capped = variant === "softcap";
  return [
    node("MatMul", "scores", [qh, kT], ["scores"]),
    node("Mul", "scaled", ["scores", "scale"], ["scaled"]),
    ...(capped
      ? [
          node("Div", "capped.div", ["scaled", "softcap"], ["capped.div"]),
          node("Tanh", "capped.tanh", ["capped.div"], ["capped.tanh"]),
          node("Mul", "capped", ["capped.tanh", "softcap"], ["capped"]),
        ]
      : []),
    node("Add", "masked", [capped ? "capped" : "scaled", "bias"], ["masked"]),
    node("Softmax", "weights", ["masked"], ["weights"], { axis: -1 }),
    node("MatMul", out, ["weights", vh], [out]),
  ];
}

/** The model's bytes for one variant and part (weights and bias included). */
export function buildFlexModel(p: FlexProblem, variant: FlexVariant, part: FlexPart): Uint8Array {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  const bias = flexBias(p, variant);
  const initializers: TensorMsg[] = [
    floatTensor("scale", [], Float32Array.of(p.scale)),
    floatTensor("bias", bias.dims, bias.data),
    ...(variant === "softcap" ? [floatTensor("softcap", [], Float32Array.of(p.constants.softcap))] : []),
  ];
  let nodes: NodeMsg[];
  if (part === "core") {
    nodes = [
      node("Transpose", "kT", ["k"], ["kT"], { perm: [0, 1, 3, 2] }),
      ...coreNodes(variant, "q", "kT", "v", ONNX_OUTPUT),
    ];
  } else {
    const split = (src: string, name: string, perm: number[]) => [
      node("Reshape", `${name}.split`, [src, "heads_shape"], [`${name}.split`]),
      node("Transpose", `${name}.heads`, [`${name}.split`], [`${name}.heads`], { perm }),
    ];
    nodes = [
      ...projectionNodes("queries", "keys", "values"),
      ...split("queries", "q", [0, 2, 1, 3]),
      ...split("keys", "kT", [0, 2, 3, 1]),
      ...split("values", "v", [0, 2, 1, 3]),
      ...coreNodes(variant, "q.heads", "kT.heads", "v.heads", "context.heads"),
      node("Transpose", "context.merge", ["context.heads"], ["context.merge"], { perm: [0, 2, 1, 3] }),
      node("Reshape", "context", ["context.merge", "model_shape"], ["context"]),
      ...outProjNodes("context"),
    ];
    initializers.push(
      ...attentionWeightInitializers(p.layer),
      int64Tensor("heads_shape", [0, 0, h, D]),
      int64Tensor("model_shape", [0, 0, d]),
    );
  }
  const heads = [b, h, t, D];
  return encodeModel({
    graphName: `flex_${variant}_${part}`,
    producerName: "@attngraph/bench",
    nodes,
    initializers,
    inputs:
      part === "core" ? FLEX_CORE_INPUTS.map((n) => floatValueInfo(n, heads)) : [floatValueInfo(ONNX_INPUT, [b, t, d])],
    outputs: [floatValueInfo(ONNX_OUTPUT, part === "core" ? heads : [b, t, d])],
    docString: `flex ${variant} ${part}, b=${b} T=${t} d=${d} heads=${h}`,
  });
}
