// Models as PyTorch users have them, built from graph nodes and loaded by their own state_dict names.
export { loadModel, type LoadModelOptions, type Model, type ModelFamily } from "./load-model.js";
export { GptModel } from "./gpt-model.js";
export { CausalLm, type LmGraphOptions } from "./causal-lm.js";
export { LoadedModel, type ModelCompileOptions } from "./loaded-model.js";
export { LlamaModel } from "./llama-model.js";
export { llamaGraph, type LlamaGraphOptions } from "./llama.js";
export {
  llamaConfigFrom,
  llamaShapes,
  type LlamaConfig,
  type LlamaConfigInput,
  type LlamaShapes,
} from "./llama-config.js";
export { EncoderLayerModel, type EncoderLayerInputs } from "./encoder-model.js";
export { MhaModel } from "./mha-model.js";
export type { MhaInputs, MhaOutputs } from "./mha-inputs.js";
export { mhaGraph, type MhaGraphOptions } from "./mha.js";
export { mhaConfigFrom, mhaShapesOf, type MhaConfig, type MhaConfigInput, type MhaShapes } from "./mha-config.js";
export { gptGraph, type GptGraphOptions } from "./gpt.js";
export { gptConfigFrom, type GptConfig, type GptConfigInput } from "./gpt-config.js";
export { detectGptLayout, gptStateDict, type GptLayout } from "./gpt-layout.js";
export { encoderLayerGraph, TORCH_MHA_WEIGHTS, type EncoderMasks } from "./encoder-layer.js";
export {
  encoderLayerConfigFrom,
  pythonCallArgs,
  type EncoderLayerConfig,
  type EncoderLayerConfigInput,
} from "./encoder-config.js";
export { ModelConfigError } from "./config-fields.js";
export { ModelInputError, tokenIds } from "./token-ids.js";
export { tensorsOf, type Checkpoint } from "./state-dict-input.js";

// Generation on a KV-cache decoder, sampling and GPT-2's tokenizer.
export { generate, generateTokens, type TokenEvent } from "./generate.js";
export type { GenerateOptions } from "./generate-options.js";
export type { Prompt } from "./generate-prompt.js";
export { GenerateError, GenerateAbortError } from "./generate-error.js";
export { argmax, drawFrom, sampleToken, samplingProbs, type SamplingOptions } from "./sampling.js";
export { splitmix32 } from "./prng.js";
export { gpt2Tokenizer, GPT2_EOT, type Tokenizer } from "./tokenizer.js";
