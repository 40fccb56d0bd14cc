// The ONNX model of one decoding step (--problem decode), built in JS like the attention model: the new token's
// projections, the cached keys and values fed in as past_key / past_value and joined with the new ones by Concat,
// the way an exported decoder with past key/values runs on onnxruntime.
//
//   x [b, 1, d] ─MatMul W_qᵀ→ ─Reshape [0,0,H,D]→ Transpose (0,2,1,3) → q.heads [b, H, 1, D]
//               ─MatMul W_kᵀ→ ─Reshape─────────→ Transpose (0,2,1,3) → k.new ─Concat(past_key, ·; axis 2)→ k.all
//               ─MatMul W_vᵀ→ ─Reshape─────────→ Transpose (0,2,1,3) → v.new ─Concat(past_value, ·; axis 2)→ v.all
//   k.all [b, H, T + 1, D] ─Transpose (0,1,3,2)→ kT.all
//   scores = MatMul(q.heads, kT.all) · scale → Softmax(axis −1) → MatMul v.all → [b, H, 1, D]
//   → Transpose (0,2,1,3) → Reshape [0,0,d] → MatMul W_oᵀ → Add b_o → y [b, 1, d]
//
// No mask: the one new query sees every cached position and itself. Plain opset-17 ops only (no com.microsoft
// contrib ops), so onnxruntime's optimizer decides what to fuse. The model outputs y only: a decode loop would also
// read back the concatenated keys and values as the next step's past (present_key / present_value), which this
// model leaves out, so onnxruntime is timed without that copy.
import type { DecodeProblem } from "../problem.js";
import { encodeModel, floatTensor, floatValueInfo, int64Tensor, node } from "@attngraph/onnx";
import {
  attentionWeightInitializers,
  ONNX_INPUT,
  ONNX_OUTPUT,
  outProjNodes,
  projectionNodes,
} from "./attention-model.js";

export { ONNX_INPUT, ONNX_OUTPUT };

/** The past inputs' names: the T cached positions' keys and values, [b, H, T, D] each. */
export const ONNX_PAST_KEY = "past_key";
export const ONNX_PAST_VALUE = "past_value";

/** decodePast's results by problem: each ort row of a shape sets up from the same problem object (run.ts). */
const pastOf = new WeakMap<DecodeProblem, { key: Float32Array; value: Float32Array }>();

/**
 * The prompt's keys and values split into heads, [b, H, T, D] each: what attngraph's cache holds after the prompt
 * (prompt · W_kᵀ and prompt · W_vᵀ per position), accumulated in float64 and rounded to float32 once. Host code,
 * outside the timed region, and once per problem (about 3 s at T=1024, d=768 in plain JS).
 */
export function decodePast(p: DecodeProblem): { key: Float32Array; value: Float32Array } {
  let past = pastOf.get(p);
  if (!past) pastOf.set(p, (past = projectPast(p)));
  return past;
}

function projectPast(p: DecodeProblem): { key: Float32Array; value: Float32Array } {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  const project = (w: Float32Array) => {
    const out = new Float32Array(b * t * d);
    for (let n = 0; n < b; n++)
      for (let i = 0; i < t; i++) {
        const x = (n * t + i) * d;
        for (let o = 0; o < d; o++) {
          let acc = 0;
          for (let k = 0; k < d; k++) acc += p.prompt[x + k]! * w[o * d + k]!;
          // [b, T, H, D] → [b, H, T, D]: output column o is head ⌊o / D⌋, element o mod D.
          out[((n * h + Math.floor(o / D)) * t + i) * D + (o % D)] = acc;
        }
      }
    return out;
  };
  return { key: project(p.wk), value: project(p.wv) };
}

/** The decode step's model bytes for this problem (weights included; the past comes in as inputs). */
export function buildDecodeModel(p: DecodeProblem): Uint8Array {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  const heads = (name: string) => [
    node("Reshape", `${name}.split`, [name, "heads_shape"], [`${name}.split`]), // [b, 1, H, D]
    node("Transpose", `${name}.heads`, [`${name}.split`], [`${name}.heads`], { perm: [0, 2, 1, 3] }), // [b, H, 1, D]
  ];
  const nodes = [
    ...projectionNodes("q", "k", "v"), // [b, 1, d] each
    ...heads("q"),
    ...heads("k"),
    ...heads("v"),
    node("Concat", "k.all", [ONNX_PAST_KEY, "k.heads"], ["k.all"], { axis: 2 }), // [b, H, T + 1, D]
    node("Concat", "v.all", [ONNX_PAST_VALUE, "v.heads"], ["v.all"], { axis: 2 }),
    node("Transpose", "kT.all", ["k.all"], ["kT.all"], { perm: [0, 1, 3, 2] }), // [b, H, D, T + 1]
    node("MatMul", "scores", ["q.heads", "kT.all"], ["scores"]), // [b, H, 1, T + 1]
    node("Mul", "scaled", ["scores", "scale"], ["scaled"]),
    node("Softmax", "weights", ["scaled"], ["weights"], { axis: -1 }),
    node("MatMul", "context.heads", ["weights", "v.all"], ["context.heads"]), // [b, H, 1, D]
    node("Transpose", "context.merge", ["context.heads"], ["context.merge"], { perm: [0, 2, 1, 3] }), // [b, 1, H, D]
    node("Reshape", "context", ["context.merge", "model_shape"], ["context"]), // [b, 1, d]
    ...outProjNodes("context"),
  ];
  const initializers = [
    ...attentionWeightInitializers(p),
    floatTensor("scale", [], Float32Array.of(p.scale)),
    int64Tensor("heads_shape", [0, 0, h, D]), // 0 = keep that dim (b, 1)
    int64Tensor("model_shape", [0, 0, d]),
  ];
  return encodeModel({
    graphName: "causal_mha_decode_step",
    producerName: "@attngraph/bench",
    nodes,
    initializers,
    inputs: [
      floatValueInfo(ONNX_INPUT, [b, 1, d]),
      floatValueInfo(ONNX_PAST_KEY, [b, h, t, D]),
      floatValueInfo(ONNX_PAST_VALUE, [b, h, t, D]),
    ],
    outputs: [floatValueInfo(ONNX_OUTPUT, [b, 1, d])],
    docString: `one decoding step of causal multi-head attention with out_proj: one new token over ${t} cached positions, b=${b} d=${d} heads=${h}`,
  });
}
