export { parseCase, type GoldenCase } from "./golden/case.js";
export { loadCase, listCases, goldenDir } from "./golden/load.js";
export { CaseFormatError } from "./golden/errors.js";
export { referenceAttention, type Position64, type ReferenceName, type TensorLike } from "./reference/attention64.js";
export { alibi64, alibiSlopes64, type Alibi64 } from "./reference/alibi64.js";
export { rope64, type Rope64 } from "./reference/rope64.js";
export { referenceDropout, referenceDropoutBits, referenceDropoutKeep } from "./reference/dropout64.js";
export { linear64, splitHeads64, mergeHeads64, kvHead, score64, mask64, softmax64, weightedSum64, type HeadDims, type Mask64, type Tensor64 } from "./reference/ops64.js";
export { mulberry32 } from "./prng.js";
