// One call from a checkpoint to a runnable model: the family and layout read off the file's keys (or named by the
// caller), the config completed from the weights' shapes, the weights renamed and checked all at once.
import { formatShape, type AnyTensor } from "@attngraph/tensor";
import { ModelConfigError } from "./config-fields.js";
import { encoderLayerConfigFrom, type EncoderLayerConfigInput } from "./encoder-config.js";
import { EncoderLayerModel } from "./encoder-model.js";
import { encoderLayerGraph } from "./encoder-layer.js";
import { weightsFrom } from "./checkpoint-weights.js";
import { gptConfigFrom, type GptConfigInput } from "./gpt-config.js";
import { detectGptLayout, gptWeightsFrom } from "./gpt-layout.js";
import type { ModelCompileOptions } from "./causal-lm.js";
import { GptModel } from "./gpt-model.js";
import { gptGraph } from "./gpt.js";
import { mhaConfigFrom, mhaShapesOf, type MhaConfigInput } from "./mha-config.js";
import { MhaModel } from "./mha-model.js";
import { mhaGraph } from "./mha.js";
import { tensorsOf, type Checkpoint } from "./state-dict-input.js";
import { llamaConfigFrom, llamaShapes, type LlamaConfigInput } from "./llama-config.js";
import { LlamaModel } from "./llama-model.js";
import { llamaGraph } from "./llama.js";

/** The families loadModel knows, with the names users call them by. */
export type ModelFamily =
  | "gpt2"
  | "nanogpt"
  | "hf-gpt2"
  | "torch-encoder-layer"
  | "TransformerEncoderLayer"
  | "torch-mha"
  | "MultiheadAttention"
  | "llama"
  | "LlamaForCausalLM";

type Family = "gpt2" | "torch-encoder-layer" | "torch-mha" | "llama";

const FAMILIES: Readonly<Record<string, Family>> = {
  gpt2: "gpt2",
  nanogpt: "gpt2",
  "hf-gpt2": "gpt2",
  gpt: "gpt2",
  "torch-encoder-layer": "torch-encoder-layer",
  TransformerEncoderLayer: "torch-encoder-layer",
  "torch-mha": "torch-mha",
  MultiheadAttention: "torch-mha",
  llama: "llama",
  LlamaForCausalLM: "llama",
};

export interface LoadModelOptions extends ModelCompileOptions {
  /** Which family the file is; read off its keys when left out (the model's `description` says what was found). */
  readonly family?: ModelFamily;
  /**
   * The constructor arguments under PyTorch's names: GPTConfig / GPT2Config fields for GPT-2 (n_head is needed unless
   * the width is one of GPT-2's released sizes), TransformerEncoderLayer's for the encoder layer, MultiheadAttention's
   * for the attention module (num_heads is needed), LlamaConfig's for Llama (num_attention_heads is needed). What the
   * weights' shapes say may be left out; a field that contradicts them is an error.
   */
  readonly config?: GptConfigInput | EncoderLayerConfigInput | MhaConfigInput | LlamaConfigInput;
  /**
   * GPT-2: whether lm_head is tied to wte. Default: tied when the file has no lm_head.weight or the same values under
   * it (nanoGPT saves both); `tie: true` with a different lm_head.weight is an error.
   */
  readonly tie?: boolean;
}

export type Model = GptModel | EncoderLayerModel | MhaModel | LlamaModel;

/**
 * A model from a checkpoint (a .safetensors file's bytes, or tensors by state_dict key); naming the family gives the
 * model's own type:
 *
 * ```ts
 * const model = loadModel(readFileSync("ckpt.safetensors"), { config: { n_head: 4 }, executors: [createCpuExecutor()] });
 * const { logits } = await model.run({ idx: [[1, 2, 3]] });
 * ```
 */
export function loadModel(
  source: Checkpoint,
  options: LoadModelOptions & { family: "torch-mha" | "MultiheadAttention" },
): MhaModel;
export function loadModel(
  source: Checkpoint,
  options: LoadModelOptions & { family: "llama" | "LlamaForCausalLM" },
): LlamaModel;
export function loadModel(
  source: Checkpoint,
  options: LoadModelOptions & { family: "torch-encoder-layer" | "TransformerEncoderLayer" },
): EncoderLayerModel;
export function loadModel(
  source: Checkpoint,
  options: LoadModelOptions & { family: "gpt2" | "nanogpt" | "hf-gpt2" },
): GptModel;
export function loadModel(source: Checkpoint, options?: LoadModelOptions): Model;
export function loadModel(source: Checkpoint, options: LoadModelOptions = {}): Model {
  const { family: familyName, config, tie, ...compileOptions } = options;
  const sd = tensorsOf(source);
  const family = familyName === undefined ? detectFamily(sd) : FAMILIES[familyName];
  if (family === undefined)
    throw new ModelConfigError(
      "options.family",
      "unknown model family",
      Object.keys(FAMILIES).join(", "),
      String(familyName),
    );
  if (family === "gpt2") {
    const { layout, shapes } = detectGptLayout(sd);
    if (tie === true && !shapes.tied)
      throw new ModelConfigError(
        "options.tie",
        "lm_head.weight differs from wte.weight, so the head cannot be tied",
        "tie: false (or leave it out)",
        "tie: true",
      );
    const c = gptConfigFrom(
      config as GptConfigInput | undefined,
      { ...shapes, tied: tie ?? shapes.tied },
      { gelu: layout.kind === "hf-gpt2" ? "tanh" : "erf", guessHeads: layout.kind === "hf-gpt2" },
    );
    const weights = gptWeightsFrom(gptGraph(c), sd, layout, "GPT-2 / nanoGPT");
    return new GptModel(c, layout, weights, compileOptions);
  }
  if (tie !== undefined)
    throw new ModelConfigError(
      "options.tie",
      "only GPT-2 models have a head to tie by option (Llama: config.tie_word_embeddings)",
      "no tie option",
      String(tie),
    );
  if (family === "llama") {
    const c = llamaConfigFrom(config as LlamaConfigInput | undefined, llamaShapes(sd));
    const weights = weightsFrom(llamaGraph(c), sd, {
      keyOf: (n) => n,
      ignorable: (k) => c.tied && k === "lm_head.weight",
      assumed: `Hugging Face LlamaForCausalLM (its state_dict names, hidden_size ${c.hiddenSize}, ${c.numLayers} layers)`,
    });
    return new LlamaModel(c, weights, compileOptions);
  }
  if (family === "torch-mha") {
    const c = mhaConfigFrom(config as MhaConfigInput | undefined, mhaShapesOf(sd));
    // The self-attention graph of packed weights has the same weights as the three-input one: either lists them all.
    const weights = weightsFrom(mhaGraph(c), sd, {
      keyOf: (n) => n,
      assumed: `torch.nn.MultiheadAttention (its state_dict names, embed_dim ${c.embedDim}, kdim ${c.kdim}, vdim ${c.vdim})`,
    });
    return new MhaModel(c, weights, compileOptions);
  }
  const inProj = sd.get("self_attn.in_proj_weight");
  const linear1 = sd.get("linear1.weight");
  if (inProj?.shape.length !== 2 || !linear1 || linear1.shape.length !== 2) {
    throw new ModelConfigError(
      "checkpoint",
      "not a torch.nn.TransformerEncoderLayer state_dict",
      "self_attn.in_proj_weight [3·d_model, d_model] and linear1.weight [dim_feedforward, d_model]",
      `${inProj ? `self_attn.in_proj_weight ${formatShape(inProj.shape)}` : "no self_attn.in_proj_weight"}, ${linear1 ? `linear1.weight ${formatShape(linear1.shape)}` : "no linear1.weight"}`,
    );
  }
  const c = encoderLayerConfigFrom(config as EncoderLayerConfigInput | undefined, {
    dModel: inProj.shape[1]!,
    dimFeedforward: linear1.shape[0]!,
    bias: sd.has("self_attn.in_proj_bias"),
  });
  const weights = weightsFrom(encoderLayerGraph(c), sd, {
    keyOf: (n) => n,
    assumed: `torch.nn.TransformerEncoderLayer (its state_dict names, d_model ${c.dModel})`,
  });
  return new EncoderLayerModel(c, weights, compileOptions);
}

/** The family by the keys only a member of it has, or an error listing what was looked for. */
function detectFamily(sd: ReadonlyMap<string, AnyTensor>): Family {
  if (sd.has("transformer.wte.weight") || sd.has("wte.weight")) return "gpt2";
  if (sd.has("model.embed_tokens.weight") && sd.has("model.layers.0.self_attn.q_proj.weight")) return "llama";
  if (sd.has("self_attn.in_proj_weight")) return "torch-encoder-layer";
  // MultiheadAttention saved on its own: its keys at the top level (inside an encoder layer they start `self_attn.`).
  if ((sd.has("in_proj_weight") || sd.has("q_proj_weight")) && sd.has("out_proj.weight")) return "torch-mha";
  const keys = [...sd.keys()];
  throw new ModelConfigError(
    "checkpoint",
    "no model family recognised by its keys (pass options.family if it is one of them)",
    "wte.weight / transformer.wte.weight (GPT-2, nanoGPT), model.embed_tokens.weight + model.layers.0.self_attn.q_proj.weight (Llama), self_attn.in_proj_weight (torch.nn.TransformerEncoderLayer) or in_proj_weight / q_proj_weight with out_proj.weight (torch.nn.MultiheadAttention)",
    keys.length
      ? `keys ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? `, … (${keys.length})` : ""}`
      : "an empty checkpoint",
  );
}
