// The configuration of a GPT-2 / nanoGPT model under the names its users already write: nanoGPT's GPTConfig
// (block_size, vocab_size, n_layer, n_head, n_embd, bias) and Hugging Face's GPT2Config (n_positions, n_ctx,
// layer_norm_epsilon, activation_function). Everything a checkpoint's shapes say is read from them (see
// gpt-layout.ts); only what no shape can say (the heads) must come from the caller, or from GPT-2's released sizes.
import { ConfigFields, ModelConfigError } from "./config-fields.js";

export interface GptConfigInput {
  readonly block_size?: number;
  readonly vocab_size?: number;
  readonly n_layer?: number;
  readonly n_head?: number;
  readonly n_embd?: number;
  /** nanoGPT's `bias`: biases in every Linear and LayerNorm (GPT-2's own checkpoints have them). */
  readonly bias?: boolean;
  /** Hugging Face's name of block_size. */
  readonly n_positions?: number;
  readonly n_ctx?: number;
  readonly layer_norm_epsilon?: number;
  /** "gelu" (exact, nanoGPT's nn.GELU()) or "gelu_new" / "gelu_pytorch_tanh" (the tanh form GPT-2 was trained with). */
  readonly activation_function?: string;
  /** Ignored (eval: identity), accepted so a GPTConfig's fields can be passed as they are. */
  readonly dropout?: number;
  readonly [other: string]: unknown;
}

export interface GptConfig {
  readonly blockSize: number;
  readonly vocabSize: number;
  readonly nLayer: number;
  readonly nHead: number;
  readonly nEmbd: number;
  readonly bias: boolean;
  readonly layerNormEps: number;
  readonly gelu: "erf" | "tanh";
  /** lm_head shares transformer.wte.weight (nanoGPT and GPT-2 do). */
  readonly tied: boolean;
}

const KNOWN = new Set([
  "block_size",
  "vocab_size",
  "n_layer",
  "n_head",
  "n_embd",
  "bias",
  "n_positions",
  "n_ctx",
  "layer_norm_epsilon",
  "activation_function",
  "dropout",
  "tie_weights",
  "tie_word_embeddings",
]);
// Fields of a Hugging Face config.json that do not change the forward pass in eval mode.
const IGNORED = new Set([
  "model_type",
  "architectures",
  "attn_pdrop",
  "embd_pdrop",
  "resid_pdrop",
  "initializer_range",
  "bos_token_id",
  "eos_token_id",
  "n_inner",
  "summary_activation",
  "summary_first_dropout",
  "summary_proj_to_labels",
  "summary_type",
  "summary_use_proj",
  "task_specific_params",
  "transformers_version",
  "use_cache",
  "torch_dtype",
  "scale_attn_weights",
  "reorder_and_upcast_attn",
  "scale_attn_by_inverse_layer_idx",
  "_name_or_path",
]);

const GELUS: Readonly<Record<string, "erf" | "tanh">> = {
  gelu: "erf",
  gelu_new: "tanh",
  gelu_pytorch_tanh: "tanh",
  gelu_fast: "tanh",
};

/** What the checkpoint's shapes said (gpt-layout.ts), to check a config against or to fill it from. */
export interface GptShapes {
  readonly blockSize: number;
  readonly vocabSize: number;
  readonly nLayer: number;
  readonly nEmbd: number;
  readonly bias: boolean;
  readonly tied: boolean;
}

/**
 * A full config from the caller's fields and the checkpoint's shapes. A field that contradicts the shapes is an error
 * naming both; n_head, which no shape holds, comes from the caller, else from GPT-2's released sizes (768 → 12, 1024 →
 * 16, 1280 → 20, 1600 → 25) when `guessHeads` (the Hugging Face layout), else an error.
 */
export function gptConfigFrom(
  input: GptConfigInput | undefined,
  shapes: GptShapes,
  defaults: { gelu: "erf" | "tanh"; guessHeads: boolean },
): GptConfig {
  const f = new ConfigFields(input, "{ n_head: 4 }", "unknown GPT config field", KNOWN, IGNORED);
  const blockSize = f.agreeing(
    "block_size",
    f.integer("block_size") ?? f.integer("n_positions") ?? f.integer("n_ctx"),
    shapes.blockSize,
    "rows of wpe.weight",
  );
  const vocabSize = f.agreeing("vocab_size", f.integer("vocab_size"), shapes.vocabSize, "rows of wte.weight");
  const nLayer = f.agreeing("n_layer", f.integer("n_layer"), shapes.nLayer, "blocks h.0 … in the file");
  const nEmbd = f.agreeing("n_embd", f.integer("n_embd"), shapes.nEmbd, "columns of wte.weight");
  const bias = f.agreeing("bias", f.optional("bias", "boolean"), shapes.bias, "whether c_attn.bias is there");
  const nHead = f.heads(
    f.integer("n_head") ?? (defaults.guessHeads ? GPT2_HEADS[nEmbd] : undefined),
    "n_head",
    nEmbd,
    "n_embd",
    ` (e.g. { n_head: ${nEmbd % 4 === 0 ? 4 : 1} })`,
  );
  const act = f.optional("activation_function", "string");
  if (act !== undefined && !Object.hasOwn(GELUS, act))
    throw new ModelConfigError(
      "config.activation_function",
      "unsupported activation",
      Object.keys(GELUS).join(", "),
      act,
    );
  const eps = f.positive("layer_norm_epsilon", 1e-5);
  const tie = f.optional("tie_weights", "boolean") ?? f.optional("tie_word_embeddings", "boolean");
  return {
    blockSize,
    vocabSize,
    nLayer,
    nHead,
    nEmbd,
    bias,
    layerNormEps: eps,
    gelu: act === undefined ? defaults.gelu : GELUS[act]!,
    tied: tie ?? shapes.tied,
  };
}

/** Heads of GPT-2's released sizes by width: small, medium, large, xl. */
const GPT2_HEADS: Readonly<Record<number, number>> = { 768: 12, 1024: 16, 1280: 20, 1600: 25 };
