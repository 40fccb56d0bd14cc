export { parseCase, type GoldenCase } from "./golden/case.js";
export { loadCase, listCases, goldenDir } from "./golden/load.js";
export { CaseFormatError } from "./golden/errors.js";
export { referenceAttention, type ReferenceName, type TensorLike } from "./reference/attention64.js";
export { referenceDropout, referenceDropoutBits, referenceDropoutKeep } from "./reference/dropout64.js";
