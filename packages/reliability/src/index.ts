export { executors, type ExecutorEntry } from "./executors.js";
export { attentionCases, materialize, describeCase, work, type AttentionCase, type Materialized } from "./cases.js";
export { checkCase, runCase, mismatch, toleranceFor, TOL, NAMES, type Outcome } from "./check.js";
export { fcSettings, soakRuns, DEFAULT_FC_SEED } from "./settings.js";
export { soak, formatSoakTable, fullGc, type SoakOptions, type SoakResult } from "./soak.js";
export { SOAK_GROWTH_BOUND } from "./soak-bound.js";
