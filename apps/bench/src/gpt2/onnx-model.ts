// The ONNX model of `--problem gpt2` for onnxruntime: GPT-2 with past key/values, as an exported Hugging Face decoder
// runs it, in plain opset-17 ops (LayerNormalization is one; the tanh GELU is written as torch.onnx writes Hugging
// Face's NewGELUActivation, so onnxruntime's optimizer may fuse it as it would in an exported model).
// One model serves the prompt (past length 0) and every later token (past length P):
//
//   input_ids, position_ids [1, S] int32 → Gather(wte) + Gather(wpe) → x [1, S, E]
//   per layer i: ln_1 → MatMul c_attn [E, 3E] + bias → Split q, k, v → heads [1, H, S, D]
//     present_key.i = Concat(past_key.i, k; axis 2) [1, H, P + S, D], likewise present_value.i
//     softmax(q · present_keyᵀ · scale + attention_bias [S, P + S]) · present_value → merged → c_proj + bias → x += ·
//     ln_2 → c_fc + bias → GELU (tanh) → c_proj + bias → x += ·
//   Slice the last position [1, 1, E] → ln_f → MatMul wteᵀ [E, V] → logits [1, 1, V]
//
// Only the last position's logits: what generation samples from (attngraph's decoder is timed on the same). The
// causal mask comes in as `attention_bias` (0 / −∞, built on the host once per length, outside the timed region); a
// token after the prompt sees every position, so its bias is a row of zeros. Weights are the problem's Hugging Face
// tensors as they are (Conv1D [in, out] is MatMul's layout); the tied head is wte transposed once, as torch.onnx
// writes a tied Linear.
import { DataType, encodeModel, floatTensor, int64Tensor, node, valueInfo, type NodeMsg } from "@attngraph/onnx";
import { transpose2d } from "../problem.js";
import type { Gpt2Problem } from "./problem.js";

export const GPT2_ONNX = {
  ids: "input_ids",
  positions: "position_ids",
  bias: "attention_bias",
  logits: "logits",
  pastKey: (i: number) => `past_key.${i}`,
  pastValue: (i: number) => `past_value.${i}`,
  presentKey: (i: number) => `present_key.${i}`,
  presentValue: (i: number) => `present_value.${i}`,
} as const;

function layerNodes(i: number, x: string): { nodes: NodeMsg[]; out: string } {
  const p = `h.${i}`;
  const n = (op: string, name: string, inputs: string[], attrs: Record<string, number | number[]> = {}) =>
    node(op, `${p}.${name}`, inputs, [`${p}.${name}`], attrs);
  const ln = (name: string, input: string) =>
    node("LayerNormalization", `${p}.${name}`, [input, `${p}.${name}.weight`, `${p}.${name}.bias`], [`${p}.${name}`], {
      axis: -1,
      epsilon: 1e-5,
    });
  const heads = (src: string) => [
    n("Reshape", `${src}.split`, [`${p}.${src}`, "heads_shape"]),
    n("Transpose", `${src}.heads`, [`${p}.${src}.split`], { perm: [0, 2, 1, 3] }),
  ];
  const nodes = [
    ln("ln_1", x),
    n("MatMul", "attn.c_attn.mm", [`${p}.ln_1`, `${p}.attn.c_attn.weight`]),
    n("Add", "attn.c_attn", [`${p}.attn.c_attn.mm`, `${p}.attn.c_attn.bias`]),
    node("Split", `${p}.attn.split`, [`${p}.attn.c_attn`, "qkv_split"], [`${p}.q`, `${p}.k`, `${p}.v`], { axis: -1 }),
    ...heads("q"),
    ...heads("k"),
    ...heads("v"),
    node("Concat", `${p}.present_key`, [GPT2_ONNX.pastKey(i), `${p}.k.heads`], [GPT2_ONNX.presentKey(i)], { axis: 2 }),
    node("Concat", `${p}.present_value`, [GPT2_ONNX.pastValue(i), `${p}.v.heads`], [GPT2_ONNX.presentValue(i)], {
      axis: 2,
    }),
    n("Transpose", "kT", [GPT2_ONNX.presentKey(i)], { perm: [0, 1, 3, 2] }),
    n("MatMul", "scores", [`${p}.q.heads`, `${p}.kT`]),
    n("Mul", "scaled", [`${p}.scores`, "scale"]),
    n("Add", "masked", [`${p}.scaled`, GPT2_ONNX.bias]),
    n("Softmax", "weights", [`${p}.masked`], { axis: -1 }),
    n("MatMul", "context.heads", [`${p}.weights`, GPT2_ONNX.presentValue(i)]),
    n("Transpose", "context.merge", [`${p}.context.heads`], { perm: [0, 2, 1, 3] }),
    n("Reshape", "context", [`${p}.context.merge`, "model_shape"]),
    n("MatMul", "attn.c_proj.mm", [`${p}.context`, `${p}.attn.c_proj.weight`]),
    n("Add", "attn.c_proj", [`${p}.attn.c_proj.mm`, `${p}.attn.c_proj.bias`]),
    n("Add", "residual", [x, `${p}.attn.c_proj`]),
    ln("ln_2", `${p}.residual`),
    n("MatMul", "mlp.c_fc.mm", [`${p}.ln_2`, `${p}.mlp.c_fc.weight`]),
    n("Add", "mlp.c_fc", [`${p}.mlp.c_fc.mm`, `${p}.mlp.c_fc.bias`]),
    // NewGELUActivation as torch.onnx writes it: 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
    n("Mul", "gelu.half_x", [`${p}.mlp.c_fc`, "half"]),
    n("Pow", "gelu.cube", [`${p}.mlp.c_fc`, "three"]),
    n("Mul", "gelu.cube_scaled", [`${p}.gelu.cube`, "gelu_c"]),
    n("Add", "gelu.inner", [`${p}.mlp.c_fc`, `${p}.gelu.cube_scaled`]),
    n("Mul", "gelu.scaled", [`${p}.gelu.inner`, "sqrt_2_over_pi"]),
    n("Tanh", "gelu.tanh", [`${p}.gelu.scaled`]),
    n("Add", "gelu.one_plus", [`${p}.gelu.tanh`, "one"]),
    n("Mul", "gelu", [`${p}.gelu.half_x`, `${p}.gelu.one_plus`]),
    n("MatMul", "mlp.c_proj.mm", [`${p}.gelu`, `${p}.mlp.c_proj.weight`]),
    n("Add", "mlp.c_proj", [`${p}.mlp.c_proj.mm`, `${p}.mlp.c_proj.bias`]),
    n("Add", "output", [`${p}.residual`, `${p}.mlp.c_proj`]),
  ];
  return { nodes, out: `${p}.output` };
}

/** The model's bytes (weights included: about 650 MB at GPT-2 small, the head's transposed copy included). */
export function buildGpt2Model(problem: Gpt2Problem): Uint8Array {
  const { vocab, layers, heads, embd } = problem.sizes;
  const D = embd / heads;
  const nodes: NodeMsg[] = [
    node("Gather", "wte.lookup", ["wte.weight", GPT2_ONNX.ids], ["wte.lookup"], { axis: 0 }),
    node("Gather", "wpe.lookup", ["wpe.weight", GPT2_ONNX.positions], ["wpe.lookup"], { axis: 0 }),
    node("Add", "embed", ["wte.lookup", "wpe.lookup"], ["embed"]),
  ];
  let x = "embed";
  for (let i = 0; i < layers; i++) {
    const layer = layerNodes(i, x);
    nodes.push(...layer.nodes);
    x = layer.out;
  }
  nodes.push(
    node("Slice", "last", [x, "last_start", "last_end", "last_axis"], ["last"]),
    node("LayerNormalization", "ln_f", ["last", "ln_f.weight", "ln_f.bias"], ["ln_f"], { axis: -1, epsilon: 1e-5 }),
    node("MatMul", GPT2_ONNX.logits, ["ln_f", "wte.weight_T"], [GPT2_ONNX.logits]),
  );
  const scalar = (name: string, v: number) => floatTensor(name, [], Float32Array.of(v));
  const initializers = [
    ...[...problem.stateDict].map(([name, t]) => floatTensor(name, t.shape, t.data)),
    floatTensor("wte.weight_T", [embd, vocab], transpose2d(problem.stateDict.get("wte.weight")!.data, vocab, embd)),
    int64Tensor("qkv_split", [embd, embd, embd]),
    int64Tensor("heads_shape", [0, 0, heads, D]),
    int64Tensor("model_shape", [0, 0, embd]),
    int64Tensor("last_start", [-1]),
    int64Tensor("last_end", [Number.MAX_SAFE_INTEGER]),
    int64Tensor("last_axis", [1]),
    scalar("scale", 1 / Math.sqrt(D)),
    scalar("half", 0.5),
    scalar("three", 3),
    scalar("gelu_c", 0.044715),
    scalar("sqrt_2_over_pi", Math.sqrt(2 / Math.PI)),
    scalar("one", 1),
  ];
  const cache = (name: string, len: string) => valueInfo(name, DataType.FLOAT, [1, heads, len, D]);
  const caches = (len: string, key: (i: number) => string, value: (i: number) => string) =>
    Array.from({ length: layers }, (_, i) => [cache(key(i), len), cache(value(i), len)]).flat();
  return encodeModel({
    graphName: "gpt2_with_past",
    producerName: "@attngraph/bench",
    nodes,
    initializers,
    inputs: [
      valueInfo(GPT2_ONNX.ids, DataType.INT32, [1, "S"]),
      valueInfo(GPT2_ONNX.positions, DataType.INT32, [1, "S"]),
      valueInfo(GPT2_ONNX.bias, DataType.FLOAT, ["S", "T"]),
      ...caches("P", GPT2_ONNX.pastKey, GPT2_ONNX.pastValue),
    ],
    outputs: [
      valueInfo(GPT2_ONNX.logits, DataType.FLOAT, [1, 1, vocab]),
      ...caches("T", GPT2_ONNX.presentKey, GPT2_ONNX.presentValue),
    ],
    docString: `GPT-2 (${layers} layers, n_embd ${embd}, ${heads} heads, vocabulary ${vocab}) with past key/values; logits of the last position`,
  });
}

/** The additive causal bias [S, P + S] of S new positions after P cached ones: 0 where key j ≤ P + i, else −∞. */
export function causalBias(s: number, past: number): Float32Array {
  const t = past + s;
  const m = new Float32Array(s * t);
  for (let i = 0; i < s; i++) for (let j = past + i + 1; j < t; j++) m[i * t + j] = -Infinity;
  return m;
}
