// The decoding step as attngraph exports it (rows `ort-web-export` / `ort-node-export`): the decode graph attngraph's
// own rows run (`multiHeadAttention(config, { decode: true })`, impls/attngraph-decode.ts), through `exportOnnx`,
// which turns each kv-append cache into a past input (named as its cache weight, [b, H, T, D]) and a present output
// (named as its kv-append node). The model a user who exported their decoder would run; decode-model.ts is the
// hand-written one. A run fetches `output` only, so its presents are not read back (as decode-model.ts has none).
import { multiHeadAttention } from "@attngraph/attention";
import { exportOnnx } from "@attngraph/onnx";
import { benchAttentionWeights, benchConfig } from "../impls/attngraph.js";
import type { DecodeProblem } from "../problem.js";
import { decodePast } from "./decode-model.js";

/** The exported graph's output (its out-proj node). */
export const EXPORTED_DECODE_OUTPUT = "output";

/** The exported model of the problem's decode graph, weights included. */
export function buildExportedDecodeModel(p: DecodeProblem): Uint8Array {
  return exportOnnx(multiHeadAttention(benchConfig(p), { decode: true }), benchAttentionWeights(p));
}

/** Its feeds: the token, and the prompt's keys and values as the two caches' past inputs. */
export function exportedDecodeFeeds(p: DecodeProblem): Record<string, { data: Float32Array; dims: number[] }> {
  const { b, t, d, h } = p.shape;
  const past = decodePast(p);
  return {
    x: { data: p.token, dims: [b, 1, d] },
    "k.cache.state": { data: past.key, dims: [b, h, t, d / h] },
    "v.cache.state": { data: past.value, dims: [b, h, t, d / h] },
  };
}
