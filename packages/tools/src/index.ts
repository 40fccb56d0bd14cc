export { runWithCache, type CachedRun } from "./cache.js";
export { ablateHeads, ablated, type AblationMode } from "./ablate.js";
export { headsAxis } from "./heads-axis.js";
export { patchFrom, type PatchEffect, type PatchingOptions, type PatchingResult } from "./patching.js";
export { diffExecutors } from "./diff.js";
export { readRepro, replayRepro, type ReplayOptions, type ReplayResult } from "./repro.js";
export {
  REPRO_FORMAT,
  REPRO_VERSION,
  type DiffOptions,
  type DiffResult,
  type FirstDisagreement,
  type NodeComparison,
  type NodeDiff,
  type Repro,
} from "./diff-types.js";
export { ReproFormatError, tensorFromJSON, tensorToJSON, type TensorJSON } from "./tensor-json.js";
export {
  attributeHeads,
  type AttributionOptions,
  type AttributionResult,
  type HeadAttribution,
} from "./attribution.js";
