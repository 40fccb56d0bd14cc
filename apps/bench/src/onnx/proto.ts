// Writing ONNX protobuf bytes with protobufjs from the hand-written subset of onnx.proto (onnx-subset.ts): small
// helpers for tensors, nodes and value infos, and the model encoder. Nothing here knows about attention.
import protobuf from "protobufjs";
import { ONNX_SUBSET_PROTO } from "./onnx-subset.js";

/** TensorProto.DataType values used here. */
export const DataType = { FLOAT: 1, INT64: 7 } as const;
/** AttributeProto.AttributeType values used here. */
const AttributeType = { FLOAT: 1, INT: 2, INTS: 7 } as const;

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
}
export interface ValueInfoMsg {
  readonly name: string;
  readonly type: object;
}

/** A float32 initializer (raw_data is little-endian IEEE 754, which is what Float32Array holds on x86 and ARM). */
export function floatTensor(name: string, dims: readonly number[], data: Float32Array): TensorMsg {
  if (data.length !== dims.reduce((a, d) => a * d, 1)) throw new Error(`initializer ${name}: ${data.length} values for dims [${dims.join(", ")}]`);
  return { name, dims, data_type: DataType.FLOAT, raw_data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** An int64 initializer, e.g. a Reshape target shape. */
export function int64Tensor(name: string, values: readonly number[]): TensorMsg {
  const data = BigInt64Array.from(values.map((v) => BigInt(v)));
  return { name, dims: [values.length], data_type: DataType.INT64, raw_data: new Uint8Array(data.buffer) };
}

/** Node attributes: a number is an INT (or FLOAT when not an integer), a number[] is INTS. */
export function node(op_type: string, name: string, input: readonly string[], output: readonly string[], attrs: Readonly<Record<string, number | readonly number[]>> = {}): NodeMsg {
  const attribute = Object.entries(attrs).map(([n, v]) =>
    typeof v === "number"
      ? Number.isInteger(v)
        ? { name: n, type: AttributeType.INT, i: v }
        : { name: n, type: AttributeType.FLOAT, f: v }
      : { name: n, type: AttributeType.INTS, ints: [...v] },
  );
  return { op_type, name, input, output, attribute };
}

/** A float32 graph input or output of fixed shape. */
export function floatValueInfo(name: string, dims: readonly number[]): ValueInfoMsg {
  return { name, type: { tensor_type: { elem_type: DataType.FLOAT, shape: { dim: dims.map((d) => ({ dim_value: d })) } } } };
}

export interface ModelParts {
  readonly graphName: string;
  readonly nodes: readonly NodeMsg[];
  readonly initializers: readonly TensorMsg[];
  readonly inputs: readonly ValueInfoMsg[];
  readonly outputs: readonly ValueInfoMsg[];
  /** Default opset 17 with IR version 8 (ONNX 1.12), which every onnxruntime in use today loads. */
  readonly opset?: number;
  readonly irVersion?: number;
  readonly docString?: string;
}

/** Encodes a ModelProto (default-domain opset only). */
export function encodeModel(parts: ModelParts): Uint8Array {
  const obj = {
    ir_version: parts.irVersion ?? 8,
    opset_import: [{ domain: "", version: parts.opset ?? 17 }],
    producer_name: "@attngraph/bench",
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
  return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, bytes: Array, defaults: false }) as Record<string, unknown>;
}
