export {
  Tensor,
  INT32_MIN,
  INT32_MAX,
  type NestedArray,
  type DType,
  type DataOf,
  type AnyTensor,
} from "./tensor.js";
export { viewStrides } from "./reshape.js";
export { sizeOf, contiguousStrides, sameShape, formatShape, checkShape, type Shape } from "./shape.js";
export { allclose, compare, type Tolerance, type Comparison, type Mismatch } from "./allclose.js";
export { formatTensor } from "./format.js";
export {
  AttnGraphError,
  ShapeError,
  SubjectError,
  UnsupportedError,
  clip,
  describe,
  type ErrorCode,
  type ErrorDetails,
} from "./errors.js";
export { mulberry32 } from "./prng.js";
export { isDensePermutation, isRowMajor, leadingStride, type StridedLayout } from "./strides.js";
