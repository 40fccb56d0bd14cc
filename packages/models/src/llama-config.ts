// The configuration of a Llama model under Hugging Face's LlamaConfig names (hidden_size, intermediate_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, rms_norm_eps, rope_theta, max_position_embeddings,
// vocab_size, tie_word_embeddings). The sizes are read off the checkpoint's shapes (llamaShapes); the heads are in no
// shape and must come from the caller. What this port does not build (rope_scaling, biases, another activation) is
// refused by name with an UnsupportedError, never ignored.
import { UnsupportedError, formatShape, type AnyTensor } from "@attngraph/tensor";
import { ConfigFields, ModelConfigError } from "./config-fields.js";

export interface LlamaConfigInput {
  readonly hidden_size?: number;
  readonly intermediate_size?: number;
  readonly num_hidden_layers?: number;
  readonly num_attention_heads?: number;
  /** Grouped-query attention: query heads share key/value heads in groups (default: num_attention_heads). */
  readonly num_key_value_heads?: number;
  readonly rms_norm_eps?: number;
  readonly rope_theta?: number;
  readonly max_position_embeddings?: number;
  readonly vocab_size?: number;
  readonly tie_word_embeddings?: boolean;
  readonly [other: string]: unknown;
}

export interface LlamaConfig {
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly maxPositions: number;
  readonly vocabSize: number;
  /** lm_head shares model.embed_tokens.weight. */
  readonly tied: boolean;
}

/** What a checkpoint's shapes say about a Llama. */
export interface LlamaShapes {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numLayers: number;
  /** Rows of k_proj: num_key_value_heads · head_dim. */
  readonly kvRows: number;
  /** No lm_head.weight in the file. */
  readonly tied: boolean;
}

const KNOWN = new Set([
  "hidden_size",
  "intermediate_size",
  "num_hidden_layers",
  "num_attention_heads",
  "num_key_value_heads",
  "rms_norm_eps",
  "rope_theta",
  "max_position_embeddings",
  "vocab_size",
  "tie_word_embeddings",
  "hidden_act",
  "rope_scaling",
  "attention_bias",
  "mlp_bias",
  "head_dim",
  "pretraining_tp",
]);
// Fields of a Hugging Face config.json that do not change the forward pass in eval mode.
const IGNORED = new Set([
  "model_type",
  "architectures",
  "attention_dropout",
  "initializer_range",
  "bos_token_id",
  "eos_token_id",
  "pad_token_id",
  "transformers_version",
  "use_cache",
  "torch_dtype",
  "_name_or_path",
]);

/** Sizes off the checkpoint: the embedding table, the blocks present, q/k/gate projections; or what is off. */
export function llamaShapes(sd: ReadonlyMap<string, AnyTensor>): LlamaShapes {
  const table = (key: string, expected: string): readonly [number, number] => {
    const t = sd.get(key);
    if (t?.shape.length !== 2)
      throw new ModelConfigError(key, "missing or not a matrix", expected, t ? formatShape(t.shape) : "no such key");
    return t.shape as [number, number];
  };
  const [vocabSize, hiddenSize] = table("model.embed_tokens.weight", "[vocab_size, hidden_size]");
  let numLayers = 0;
  while (sd.has(`model.layers.${numLayers}.self_attn.q_proj.weight`)) numLayers++;
  if (numLayers === 0)
    throw new ModelConfigError(
      "model.layers.0.self_attn.q_proj.weight",
      "a Llama checkpoint has at least one decoder layer",
      "[hidden_size, hidden_size]",
      "no such key",
    );
  const [kvRows] = table("model.layers.0.self_attn.k_proj.weight", "[num_key_value_heads · head_dim, hidden_size]");
  const [intermediateSize] = table("model.layers.0.mlp.gate_proj.weight", "[intermediate_size, hidden_size]");
  return { vocabSize, hiddenSize, intermediateSize, numLayers, kvRows, tied: !sd.has("lm_head.weight") };
}

/**
 * A full config from the caller's fields and the checkpoint's shapes. A size that contradicts the shapes is an error
 * naming both; num_attention_heads must be given (no shape holds it); num_key_value_heads follows from k_proj's rows.
 */
export function llamaConfigFrom(input: LlamaConfigInput | undefined, shapes: LlamaShapes): LlamaConfig {
  const f = new ConfigFields(input, "{ num_attention_heads: 4 }", "unknown Llama config field", KNOWN, IGNORED);
  refuseUnbuilt(f);
  const agree = (key: string, fromShapes: number, where: string): number =>
    f.agreeing(key, f.integer(key), fromShapes, where);
  const hiddenSize = agree("hidden_size", shapes.hiddenSize, "columns of model.embed_tokens.weight");
  const vocabSize = agree("vocab_size", shapes.vocabSize, "rows of model.embed_tokens.weight");
  const numLayers = agree("num_hidden_layers", shapes.numLayers, "layers model.layers.0 … in the file");
  const intermediateSize = agree("intermediate_size", shapes.intermediateSize, "rows of mlp.gate_proj.weight");
  const numHeads = f.heads(f.integer("num_attention_heads"), "num_attention_heads", hiddenSize, "hidden_size");
  const headDim = hiddenSize / numHeads;
  const givenHeadDim = f.integer("head_dim");
  if (givenHeadDim !== undefined && givenHeadDim !== headDim)
    throw new UnsupportedError(`a head_dim other than hidden_size / num_attention_heads (config.head_dim)`, {
      subject: "config.head_dim",
      expected: String(headDim),
      got: String(givenHeadDim),
    });
  if (headDim % 2 !== 0)
    throw new UnsupportedError(`RoPE over an odd head dim (hidden_size / num_attention_heads = ${headDim})`, {
      subject: "config.num_attention_heads",
      expected: "an even head dim",
      got: String(headDim),
    });
  if (shapes.kvRows % headDim !== 0)
    throw new ModelConfigError(
      "model.layers.0.self_attn.k_proj.weight",
      "k_proj rows must be a whole number of heads",
      `a multiple of head_dim ${headDim}`,
      String(shapes.kvRows),
    );
  const numKvHeads = f.integer("num_key_value_heads") ?? shapes.kvRows / headDim;
  if (numKvHeads * headDim !== shapes.kvRows)
    throw new ModelConfigError(
      "config.num_key_value_heads",
      "disagrees with the checkpoint (rows of k_proj.weight / head_dim)",
      String(shapes.kvRows / headDim),
      String(numKvHeads),
    );
  if (numHeads % numKvHeads !== 0)
    throw new ModelConfigError(
      "config.num_key_value_heads",
      "num_attention_heads must be a multiple of num_key_value_heads",
      `a divisor of ${numHeads}`,
      String(numKvHeads),
    );
  const rmsNormEps = f.positive("rms_norm_eps", 1e-6);
  const ropeTheta = f.positive("rope_theta", 10000);
  const maxPositions = f.integer("max_position_embeddings") ?? 2048;
  const tie = f.optional("tie_word_embeddings", "boolean");
  if (tie === false && shapes.tied)
    throw new ModelConfigError(
      "config.tie_word_embeddings",
      "the checkpoint has no lm_head.weight, so the head must be tied",
      "true (or leave it out)",
      "false",
    );
  return {
    hiddenSize,
    intermediateSize,
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps,
    ropeTheta,
    maxPositions,
    vocabSize,
    tied: tie ?? shapes.tied,
  };
}

/** Hugging Face options this port does not build: each refused by its field name. */
function refuseUnbuilt(f: ConfigFields): void {
  const c = f.fields;
  const refuse = (key: string, what: string, expected: string) => {
    throw new UnsupportedError(`${what} (config.${key})`, {
      subject: `config.${key}`,
      expected,
      got: JSON.stringify(c[key]),
    });
  };
  const act = f.optional("hidden_act", "string");
  if (act !== undefined && act !== "silu") refuse("hidden_act", `Llama MLP activation ${act}`, '"silu"');
  if (c["rope_scaling"] !== undefined && c["rope_scaling"] !== null)
    refuse("rope_scaling", "RoPE scaling (linear, dynamic, llama3, yarn)", "null");
  if (f.optional("attention_bias", "boolean") === true)
    refuse("attention_bias", "biases in the attention projections", "false");
  if (f.optional("mlp_bias", "boolean") === true) refuse("mlp_bias", "biases in the MLP projections", "false");
  const tp = f.integer("pretraining_tp");
  if (tp !== undefined && tp !== 1) refuse("pretraining_tp", "pretraining_tp slicing", "1");
}
