// Writing ONNX protobuf bytes with protobufjs from the hand-written subset of onnx.proto (onnx-subset.ts): small
// helpers for tensors, nodes and value infos, and the model encoder. Nothing here knows about attention or attngraph.
import protobuf from "protobufjs";
import { ONNX_SUBSET_PROTO } from "./onnx-subset.js";

/** TensorProto.DataType values used here. */
export const DataType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9, DOUBLE: 11 } as const;
/** AttributeProto.AttributeType values used here. */
const AttributeType = { FLOAT: 1, INT: 2, STRING: 3, INTS: 7 } as const;

// Parsed once; keepCase keeps onnx.proto's snake_case field names.
const root = protobuf.parse(ONNX_SUBSET_PROTO, { keepCase: true }).root;
const ModelProto = root.lookupType("onnx.ModelProto");

/** Plain objects shaped like the messages (protobufjs `fromObject` input). */
export interface TensorMsg {
  readonly name: string;
  readonly dims: readonly number[];
  readonly data_type: number;
  readonly raw_data: Uint8Array;
}
export interface NodeMsg {
  readonly op_type: string;
  readonly name: string;
  readonly input: readonly string[];
  readonly output: readonly string[];
  readonly attribute: readonly object[];
  /** "" (or absent) = the default ONNX domain; "com.microsoft" for onnxruntime's contrib ops. */
  readonly domain?: string;
}
export interface ValueInfoMsg {
  readonly name: string;
  readonly type: object;
}

/** Attribute values: a number is an INT (or FLOAT when not an integer), a number[] is INTS, a string is STRING. */
export type AttrValue = number | readonly number[] | string | { readonly float: number };

function bytesOf(data: ArrayBufferView): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function checkCount(name: string, dims: readonly number[], length: number): void {
  if (length !== dims.reduce((a, d) => a * d, 1))
    throw new Error(`initializer ${name}: ${length} values for dims [${dims.join(", ")}]`);
}

/** A float32 initializer (raw_data is little-endian IEEE 754, which is what Float32Array holds on x86 and ARM). */
export function floatTensor(name: string, dims: readonly number[], data: Float32Array): TensorMsg {
  checkCount(name, dims, data.length);
  return { name, dims, data_type: DataType.FLOAT, raw_data: bytesOf(data) };
}

/** A float64 initializer (angles computed in double, as the cpu kernels do). */
export function doubleTensor(name: string, dims: readonly number[], data: Float64Array): TensorMsg {
  checkCount(name, dims, data.length);
  return { name, dims, data_type: DataType.DOUBLE, raw_data: bytesOf(data) };
}

/** An int32 initializer (token ids and targets). */
export function int32Tensor(name: string, dims: readonly number[], data: Int32Array): TensorMsg {
  checkCount(name, dims, data.length);
  return { name, dims, data_type: DataType.INT32, raw_data: bytesOf(data) };
}

/** An int64 initializer, e.g. a Reshape target shape; a 1-D tensor unless `dims` says otherwise ([] = a scalar). */
export function int64Tensor(
  name: string,
  values: readonly number[],
  dims: readonly number[] = [values.length],
): TensorMsg {
  checkCount(name, dims, values.length);
  const data = BigInt64Array.from(values.map((v) => BigInt(v)));
  return { name, dims, data_type: DataType.INT64, raw_data: bytesOf(data) };
}

function attribute(name: string, v: AttrValue): object {
  if (typeof v === "string") return { name, type: AttributeType.STRING, s: new TextEncoder().encode(v) };
  if (typeof v === "number")
    return Number.isInteger(v) ? { name, type: AttributeType.INT, i: v } : { name, type: AttributeType.FLOAT, f: v };
  if ("float" in v) return { name, type: AttributeType.FLOAT, f: v.float }; // a float attribute whose value is whole (epsilon 1, alpha 2)
  return { name, type: AttributeType.INTS, ints: [...v] };
}

/** A node; `domain` "com.microsoft" for an onnxruntime contrib op. */
export function node(
  op_type: string,
  name: string,
  input: readonly string[],
  output: readonly string[],
  attrs: Readonly<Record<string, AttrValue>> = {},
  domain = "",
): NodeMsg {
  const attribute_ = Object.entries(attrs).map(([n, v]) => attribute(n, v));
  return { op_type, name, input, output, attribute: attribute_, ...(domain ? { domain } : {}) };
}

/** A dim of a value info: a number is dim_value, a string a symbolic dim_param. */
export type InfoDim = number | string;

/** A graph input or output: element type and shape (symbolic dims as dim_param). */
export function valueInfo(name: string, elemType: number, dims: readonly InfoDim[]): ValueInfoMsg {
  const dim = dims.map((d) => (typeof d === "number" ? { dim_value: d } : { dim_param: d }));
  return { name, type: { tensor_type: { elem_type: elemType, shape: { dim } } } };
}

/** A float32 graph input or output of fixed shape. */
export function floatValueInfo(name: string, dims: readonly number[]): ValueInfoMsg {
  return valueInfo(name, DataType.FLOAT, dims);
}

export interface OpsetImport {
  /** "" = the default ONNX domain. */
  readonly domain: string;
  readonly version: number;
}

export interface ModelParts {
  readonly graphName: string;
  readonly nodes: readonly NodeMsg[];
  readonly initializers: readonly TensorMsg[];
  readonly inputs: readonly ValueInfoMsg[];
  readonly outputs: readonly ValueInfoMsg[];
  /** Default: opset 17 of the default domain, which every onnxruntime in use today loads. */
  readonly opsetImports?: readonly OpsetImport[];
  /** Default IR version 8 (ONNX 1.12, the first with opset 17). */
  readonly irVersion?: number;
  readonly producerName?: string;
  readonly docString?: string;
}

/** Encodes a ModelProto. */
export function encodeModel(parts: ModelParts): Uint8Array {
  const obj = {
    ir_version: parts.irVersion ?? 8,
    opset_import: parts.opsetImports ?? [{ domain: "", version: 17 }],
    producer_name: parts.producerName ?? "@attngraph/onnx",
    producer_version: "0",
    ...(parts.docString ? { doc_string: parts.docString } : {}),
    graph: {
      name: parts.graphName,
      node: parts.nodes,
      initializer: parts.initializers,
      input: parts.inputs,
      output: parts.outputs,
    },
  };
  const err = ModelProto.verify(obj);
  if (err) throw new Error(`ONNX model does not match onnx.proto: ${err}`);
  return ModelProto.encode(ModelProto.fromObject(obj)).finish();
}

/** Decodes bytes written by encodeModel back to a plain object (for tests and inspection). */
export function decodeModel(bytes: Uint8Array): Record<string, unknown> {
  return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, bytes: Array, defaults: false }) as Record<
    string,
    unknown
  >;
}
