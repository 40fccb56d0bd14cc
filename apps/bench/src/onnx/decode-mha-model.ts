// The decoding step as onnxruntime's contrib op: the new token's Q, K and V projections, then com.microsoft
// MultiHeadAttention (num_heads H) with the cached keys and values as its past_key / past_value inputs [b, H, T, D]
// (it appends the new key and value itself and attends over all T + 1), then out_proj and its bias. Same inputs,
// output and weights as the plain model (decode-model.ts), so either can serve the ort rows; the bench runs this one
// only when named (`ort-web-mha`, `ort-node-mha`), to compare: neither form was consistently the faster on
// onnxruntime-web at the shapes (README, Decode).
//
//   x [b, 1, d] ─MatMul W_qᵀ / W_kᵀ / W_vᵀ→ q, k, v [b, 1, d]
//   MultiHeadAttention(q, k, v, past_key = past_key, past_value = past_value) → context [b, 1, d] (and present_key,
//   present_value [b, H, T + 1, D], which are not graph outputs)
//   → MatMul W_oᵀ → Add b_o → y [b, 1, d]
import type { DecodeProblem } from "../problem.js";
import { encodeModel, floatValueInfo, node } from "@attngraph/onnx";
import {
  attentionWeightInitializers,
  ONNX_INPUT,
  ONNX_OUTPUT,
  outProjNodes,
  projectionNodes,
} from "./attention-model.js";
import { ONNX_PAST_KEY, ONNX_PAST_VALUE } from "./decode-model.js";

/** The contrib op set the model imports beside opset 17. */
const CONTRIB = { domain: "com.microsoft", version: 1 } as const;

/** The decode step's model bytes with the contrib MultiHeadAttention (weights included; the past comes in as inputs). */
export function buildDecodeMhaModel(p: DecodeProblem): Uint8Array {
  const { b, t, d, h } = p.shape;
  // MultiHeadAttention's inputs by position: query, key, value, bias, key_padding_mask, attention_bias, past_key,
  // past_value ("" = absent). It scales by 1/sqrt(D) itself, the problem's scale. Its present_key / present_value
  // outputs must be named even though nothing reads them: without them onnxruntime 1.30's CPU kernel silently ignores
  // the past inputs and attends over the new token alone (the test against the plain model catches that).
  const nodes = [
    ...projectionNodes("q", "k", "v"),
    node(
      "MultiHeadAttention",
      "attention",
      ["q", "k", "v", "", "", "", ONNX_PAST_KEY, ONNX_PAST_VALUE],
      ["context", "present_key", "present_value"],
      { num_heads: h },
      CONTRIB.domain,
    ),
    ...outProjNodes("context"),
  ];
  return encodeModel({
    graphName: "causal_mha_decode_step_contrib",
    producerName: "@attngraph/bench",
    nodes,
    initializers: attentionWeightInitializers(p),
    inputs: [
      floatValueInfo(ONNX_INPUT, [b, 1, d]),
      floatValueInfo(ONNX_PAST_KEY, [b, h, t, d / h]),
      floatValueInfo(ONNX_PAST_VALUE, [b, h, t, d / h]),
    ],
    outputs: [floatValueInfo(ONNX_OUTPUT, [b, 1, d])],
    opsetImports: [{ domain: "", version: 17 }, CONTRIB],
    docString: `one decoding step with com.microsoft MultiHeadAttention (past_key/past_value): ${t} cached positions, b=${b} d=${d} heads=${h}`,
  });
}
