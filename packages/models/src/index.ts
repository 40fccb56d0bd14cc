// Models as PyTorch users have them, built from graph nodes and loaded by their own state_dict names.

// Generation on a KV-cache decoder, sampling and GPT-2's tokenizer.
export { generate, generateTokens, type TokenEvent } from "./generate.js";
export type { GenerateOptions } from "./generate-options.js";
export type { Prompt } from "./generate-prompt.js";
export { GenerateError, GenerateAbortError } from "./generate-error.js";
export { argmax, drawFrom, sampleToken, samplingProbs, type SamplingOptions } from "./sampling.js";
export { splitmix32 } from "./prng.js";
export { gpt2Tokenizer, GPT2_EOT, type Tokenizer } from "./tokenizer.js";
