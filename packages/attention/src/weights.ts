import { Tensor } from "@attngraph/tensor";
import { ConfigError, headDim, normalizeConfig, type AttentionConfig, type AttentionConfigInput } from "./config.js";

/** A weight as the golden files write it: row-major data and a shape. */
export type RawWeight = Tensor | { readonly shape: readonly number[]; readonly data: ArrayLike<number> };

/**
 * The tensors a built attention graph expects, from weights named as in the golden cases (W_query, W_key, W_value,
 * b_query, b_key, b_value, out_proj, out_bias). With `fusedQkv`, the three projections are stacked by rows into
 * W_qkv (and b_qkv), in the order queries, keys, values; for cross-attention only keys and values, into W_kv (b_kv).
 */
export function attentionWeights(
  config: AttentionConfigInput | AttentionConfig,
  raw: Readonly<Record<string, RawWeight>>,
  options: { fusedQkv?: boolean; prefix?: string } = {},
): Record<string, Tensor> {
  const c = normalizeConfig(config);
  const p = options.prefix ? `${options.prefix}.` : "";
  const get = (n: string): Tensor => {
    const w = raw[n];
    if (!w) throw new ConfigError(n, `missing weight ${n}`, "a tensor", "nothing");
    return w instanceof Tensor ? w : Tensor.from(w.data, w.shape);
  };
  const out: Record<string, Tensor> = {};
  const qkv = c.qkvBias
    ? ["W_query", "W_key", "W_value", "b_query", "b_key", "b_value"]
    : ["W_query", "W_key", "W_value"];
  const ekv = c.numKvHeads * headDim(c);
  if (options.fusedQkv && !c.cross) {
    out[`${p}W_qkv`] = stackRows(["W_query", "W_key", "W_value"].map(get), [c.dOut + 2 * ekv, c.dIn]);
    if (c.qkvBias) out[`${p}b_qkv`] = stackRows(["b_query", "b_key", "b_value"].map(get), [c.dOut + 2 * ekv]);
  } else if (options.fusedQkv) {
    out[`${p}W_query`] = get("W_query");
    out[`${p}W_kv`] = stackRows(["W_key", "W_value"].map(get), [2 * ekv, c.dIn]);
    if (c.qkvBias) {
      out[`${p}b_query`] = get("b_query");
      out[`${p}b_kv`] = stackRows(["b_key", "b_value"].map(get), [2 * ekv]);
    }
  } else {
    for (const n of qkv) out[p + n] = get(n);
  }
  if (c.outProj) out[`${p}out_proj`] = get("out_proj");
  if (c.outBias) out[`${p}out_bias`] = get("out_bias");
  return out;
}

function stackRows(parts: Tensor[], shape: number[]): Tensor {
  const data = new Float32Array(shape.reduce((a, d) => a * d, 1));
  let at = 0;
  for (const t of parts) {
    t.copyInto(data, at);
    at += t.size;
  }
  if (at !== data.length)
    throw new ConfigError(
      "W_qkv",
      "stacked weights do not fill the fused projection",
      `${data.length} values`,
      `${at}`,
    );
  return new Tensor(data, shape);
}
