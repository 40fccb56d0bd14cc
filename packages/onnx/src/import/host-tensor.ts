// A tensor the importer holds on the host while it reads and folds the file: initializers, Constant values and
// whatever a node computes from them alone (shape arithmetic, masks). Integers of every width, bools and doubles are
// held as float64 numbers (exact up to 2^53; int64 sentinels like INT64_MAX only ever clamp), float32 as float32.
// Shapes are plain arrays here as in @attngraph/tensor: its element count, row-major strides and printing serve both.
export { contiguousStrides as stridesOf, formatShape, sizeOf } from "@attngraph/tensor";

export type ElemType = "float32" | "float64" | "int64" | "int32" | "bool" | "float16" | "int8" | "uint8";

export interface HostTensor {
  readonly dtype: ElemType;
  readonly shape: readonly number[];
  readonly data: Float32Array | Float64Array;
}

/** ONNX TensorProto.DataType → the types read here; undefined for the rest (strings, complex, bfloat16, …). */
export const ONNX_ELEM: Readonly<Record<number, ElemType>> = {
  1: "float32",
  2: "uint8",
  3: "int8",
  6: "int32",
  7: "int64",
  9: "bool",
  10: "float16",
  11: "float64",
};
export const ONNX_ELEM_NAMES: Readonly<Record<number, string>> = {
  0: "UNDEFINED",
  1: "FLOAT",
  2: "UINT8",
  3: "INT8",
  4: "UINT16",
  5: "INT16",
  6: "INT32",
  7: "INT64",
  8: "STRING",
  9: "BOOL",
  10: "FLOAT16",
  11: "DOUBLE",
  12: "UINT32",
  13: "UINT64",
  14: "COMPLEX64",
  15: "COMPLEX128",
  16: "BFLOAT16",
};

export function isFloat(t: ElemType): boolean {
  return t === "float32" || t === "float64" || t === "float16";
}

/** A tensor of `dtype` with `data` (float types other than float64 are stored as float32). */
export function hostTensor(dtype: ElemType, shape: readonly number[], data: ArrayLike<number>): HostTensor {
  const store = dtype === "float32" || dtype === "float16" ? Float32Array.from(data) : Float64Array.from(data);
  return { dtype: dtype === "float16" ? "float32" : dtype, shape: [...shape], data: store };
}

export function scalarOf(t: HostTensor): number | undefined {
  return t.data.length === 1 ? t.data[0] : undefined;
}
