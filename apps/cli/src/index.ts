export { main } from "./main.js";
export type { IO } from "./io.js";
export { runCase, type CaseResult, type TensorCheck, type RunCaseOptions } from "./conformance/run-case.js";
export {
  runConformance,
  formatResult,
  formatSummary,
  type ConformanceOptions,
  type ConformanceSummary,
} from "./conformance/runner.js";
