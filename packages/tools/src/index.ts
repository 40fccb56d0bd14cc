export { runWithCache, type CachedRun } from "./cache.js";
export { ablateHeads, ablated, type AblationMode } from "./ablate.js";
export { patchFrom, type PatchEffect, type PatchingOptions, type PatchingResult } from "./patching.js";
