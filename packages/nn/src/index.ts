export { normalizeBlockConfig, normalizeTransformerConfig, type BlockConfig, type BlockConfigInput, type TransformerConfig, type TransformerConfigInput } from "./config.js";
export { addLayerNorm, addLinear, addMlp } from "./layers.js";
export { addTransformerBlock, transformerBlock, PYTORCH_ATTENTION_WEIGHTS, type BlockOptions, type BlockRefs } from "./block.js";
export { simpleTransformer, blockName, type TransformerOptions } from "./model.js";
export { loadStateDict, StateDictError, type StateDict, type TensorJSON } from "./state-dict.js";
export { readSafetensors, writeSafetensors, SafetensorsError, halfToFloat, bfloat16ToFloat } from "./safetensors.js";
export { defaultInit } from "./init.js";
