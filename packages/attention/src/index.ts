export {
  normalizeConfig,
  headDim,
  effectiveScale,
  ConfigError,
  type AttentionConfig,
  type AttentionConfigInput,
} from "./config.js";
export {
  addAttention,
  buildAttention,
  type AttentionOptions,
  type AttentionRefs,
  type StandardWeight,
} from "./build.js";
export type { PositionEncoding } from "./position.js";
export { selfAttention, causalAttention, multiHeadAttention, fusedQkvAttention } from "./variants.js";
export { attentionWeights, type RawWeight } from "./weights.js";
export { addFlexAttention, flexAttention, type FlexAttentionSpec, type FlexRefs } from "./flex.js";
