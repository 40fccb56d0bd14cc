export { parseCase, type GoldenCase } from "./golden/case.js";
export { loadCase, listCases, goldenDir } from "./golden/load.js";
export { CaseFormatError } from "./golden/errors.js";
export { referenceAttention, type ReferenceName, type TensorLike } from "./reference/attention64.js";
export { referenceDropout, referenceDropoutBits, referenceDropoutKeep } from "./reference/dropout64.js";
export { runCase, type CaseResult, type TensorCheck, type RunCaseOptions } from "./run-case.js";
export { runConformance, formatResult, formatSummary, type ConformanceOptions, type ConformanceSummary } from "./conformance.js";
