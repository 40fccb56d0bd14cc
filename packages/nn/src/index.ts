export {
  normalizeBlockConfig,
  normalizeTransformerConfig,
  type BlockConfig,
  type BlockConfigInput,
  type TransformerConfig,
  type TransformerConfigInput,
} from "./config.js";
export { addLayerNorm, addLinear, addMlp } from "./layers.js";
export {
  addTransformerBlock,
  transformerBlock,
  PYTORCH_ATTENTION_WEIGHTS,
  type BlockOptions,
  type BlockRefs,
} from "./block.js";
export { simpleTransformer, blockName, type TransformerOptions } from "./model.js";
export { loadStateDict, StateDictError, type BadValue, type StateDict, type TensorJSON } from "./state-dict.js";
export { readSafetensors, SafetensorsError, halfToFloat, bfloat16ToFloat } from "./safetensors.js";
export { writeSafetensors } from "./safetensors-write.js";
export { defaultInit } from "./init.js";
