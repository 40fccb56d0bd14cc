// Bytes → a checked, plain description of an ONNX model: nodes with their attributes, initializers and Constant values
// as host tensors, graph inputs and outputs with their element types and dims. Every way a hostile or broken file can
// be wrong ends here as an OnnxImportError naming the field: bytes that are not protobuf, a tensor whose dims disagree
// with its data, dims that overflow, external data that was not given, a node without an op type. Time and memory are
// bounded by the file: nothing recurses on the file's nesting (subgraphs are skipped unread, see onnx-subset.ts) and
// nothing is allocated from a declared size before the data backing it has been counted.
import protobuf from "protobufjs";
import { ONNX_SUBSET_PROTO } from "../proto/onnx-subset.js";
import { OnnxImportError } from "./import-error.js";
import { ONNX_ELEM, ONNX_ELEM_NAMES, formatShape, type ElemType, type HostTensor } from "./host-tensor.js";

const root = protobuf.parse(ONNX_SUBSET_PROTO, { keepCase: true }).root;
const ModelProto = root.lookupType("onnx.ModelProto");

/** Largest element count of one tensor (what a typed array can hold), and of all nodes of one graph. */
export const MAX_ELEMENTS = 2 ** 31 - 1;
export const MAX_NODES = 1_000_000;

export interface AttrIn {
  readonly name: string;
  readonly f?: number;
  readonly i?: number;
  readonly s?: string;
  readonly t?: HostTensor;
  readonly floats?: readonly number[];
  readonly ints?: readonly number[];
  /** The AttributeProto type, for what is held but not read (graphs, strings lists). */
  readonly type: number;
}

export interface NodeIn {
  /** The node's name, or `<op_type>#<index>` where the file gives none. */
  readonly name: string;
  readonly opType: string;
  readonly domain: string;
  /** Input value names; "" is an optional input left out. */
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attrs: ReadonlyMap<string, AttrIn>;
  readonly index: number;
}

/** A dim of a graph input or output: a number, a dim_param name, or undefined where the file says neither. */
export type DimIn = number | string | undefined;

export interface ValueIn {
  readonly name: string;
  readonly elemType: ElemType | undefined;
  readonly elemTypeName: string;
  readonly dims: readonly DimIn[] | undefined;
}

export interface ModelIn {
  readonly irVersion: number;
  readonly opsets: ReadonlyMap<string, number>;
  readonly producer: string;
  readonly nodes: readonly NodeIn[];
  readonly initializers: ReadonlyMap<string, HostTensor>;
  readonly inputs: readonly ValueIn[];
  readonly outputs: readonly ValueIn[];
}

export interface ReadOptions {
  /**
   * The bytes of external data files by their `location` (an object, or a function that reads one and returns
   * undefined for a location it will not read); a tensor stored outside the file is refused without it.
   */
  readonly externalData?: Readonly<Record<string, Uint8Array>> | ((location: string) => Uint8Array | undefined);
}

type Obj = Record<string, unknown>;

export function readModel(bytes: unknown, options: ReadOptions = {}): ModelIn {
  if (!(bytes instanceof Uint8Array))
    throw new OnnxImportError(
      "bytes",
      "an ONNX model is given as its bytes",
      "a Uint8Array",
      typeof bytes === "object" ? String((bytes as object)?.constructor?.name ?? bytes) : typeof bytes,
    );
  if (bytes.length === 0) throw new OnnxImportError("bytes", "the file is empty", "an ONNX ModelProto", "0 bytes");
  let m: Obj;
  try {
    m = ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, defaults: false, arrays: true }) as Obj;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new OnnxImportError(
      "bytes",
      "not an ONNX ModelProto (truncated or malformed protobuf)",
      "protobuf bytes of onnx.ModelProto",
      why,
    );
  }
  const graph = m["graph"] as Obj | undefined;
  if (!graph)
    throw new OnnxImportError("model.graph", "the model has no graph", "a GraphProto", "none (is this an ONNX file?)");
  const opsets = new Map<string, number>();
  for (const o of (m["opset_import"] as Obj[]) ?? []) opsets.set(String(o["domain"] ?? ""), Number(o["version"] ?? 0));
  const rawNodes = (graph["node"] as Obj[]) ?? [];
  if (rawNodes.length > MAX_NODES)
    throw new OnnxImportError("graph.node", "too many nodes", `at most ${MAX_NODES}`, String(rawNodes.length));
  const initializers = new Map<string, HostTensor>();
  ((graph["initializer"] as Obj[]) ?? []).forEach((t, i) => {
    const name = stringField(t["name"], `graph.initializer[${i}].name`);
    if (!name)
      throw new OnnxImportError(
        `graph.initializer[${i}].name`,
        "an initializer needs a name",
        "a non-empty string",
        '""',
      );
    if (initializers.has(name))
      throw new OnnxImportError(`initializer ${name}`, "two initializers of one name", "unique names", name);
    initializers.set(name, readTensor(t, `initializer ${name}`, options));
  });
  const nodes = rawNodes.map((n, i) => readNode(n, i, options));
  return {
    irVersion: Number(m["ir_version"] ?? 0),
    opsets,
    producer: String(m["producer_name"] ?? ""),
    nodes,
    initializers,
    inputs: ((graph["input"] as Obj[]) ?? []).map((v, i) => readValueInfo(v, `graph.input[${i}]`)),
    outputs: ((graph["output"] as Obj[]) ?? []).map((v, i) => readValueInfo(v, `graph.output[${i}]`)),
  };
}

function stringField(v: unknown, field: string): string {
  if (v === undefined) return "";
  if (typeof v !== "string") throw new OnnxImportError(field, "not a string", "a string", typeof v);
  return v;
}

function readNode(n: Obj, index: number, options: ReadOptions): NodeIn {
  const opType = stringField(n["op_type"], `graph.node[${index}].op_type`);
  if (!opType)
    throw new OnnxImportError(`graph.node[${index}].op_type`, "a node without an op type", "e.g. MatMul", '""');
  const name = stringField(n["name"], `graph.node[${index}].name`) || `${opType}#${index}`;
  const attrs = new Map<string, AttrIn>();
  for (const a of (n["attribute"] as Obj[]) ?? []) {
    const an = stringField(a["name"], `node ${name}.attribute.name`);
    const attr: AttrIn = {
      name: an,
      type: Number(a["type"] ?? 0),
      ...(a["f"] !== undefined ? { f: Number(a["f"]) } : {}),
      ...(a["i"] !== undefined ? { i: Number(a["i"]) } : {}),
      ...(a["s"] !== undefined ? { s: new TextDecoder().decode(a["s"] as Uint8Array) } : {}),
      ...(a["t"] !== undefined ? { t: readTensor(a["t"] as Obj, `node ${name}.attribute ${an}`, options) } : {}),
      ...(a["floats"] !== undefined ? { floats: (a["floats"] as number[]).map(Number) } : {}),
      ...(a["ints"] !== undefined ? { ints: (a["ints"] as number[]).map(Number) } : {}),
    };
    attrs.set(an, attr);
  }
  const ins = ((n["input"] as unknown[]) ?? []).map((v, i) => stringField(v, `node ${name}.input[${i}]`));
  const outs = ((n["output"] as unknown[]) ?? []).map((v, i) => stringField(v, `node ${name}.output[${i}]`));
  return {
    name,
    opType,
    domain: stringField(n["domain"], `node ${name}.domain`),
    inputs: ins,
    outputs: outs,
    attrs,
    index,
  };
}

function readValueInfo(v: Obj, field: string): ValueIn {
  const name = stringField(v["name"], `${field}.name`);
  const tt = ((v["type"] as Obj | undefined)?.["tensor_type"] as Obj | undefined) ?? undefined;
  const code = Number(tt?.["elem_type"] ?? 0);
  const shape = tt?.["shape"] as Obj | undefined;
  const dims = shape
    ? ((shape["dim"] as Obj[]) ?? []).map(
        (d): DimIn =>
          d["dim_value"] !== undefined
            ? Number(d["dim_value"])
            : typeof d["dim_param"] === "string" && d["dim_param"]
              ? (d["dim_param"] as string)
              : undefined,
      )
    : undefined;
  return { name, elemType: ONNX_ELEM[code], elemTypeName: ONNX_ELEM_NAMES[code] ?? `type ${code}`, dims };
}

/** Checked dims: whole numbers >= 0 whose product fits one typed array. */
export function checkDims(dims: readonly number[], subject: string): number {
  let count = 1;
  for (const [i, d] of dims.entries()) {
    if (!Number.isSafeInteger(d) || d < 0)
      throw new OnnxImportError(
        `${subject}.dims[${i}]`,
        "a dim must be a whole number >= 0",
        "0 … 2^31 − 1",
        String(d),
      );
    count *= d;
    if (count > MAX_ELEMENTS)
      throw new OnnxImportError(
        `${subject}.dims`,
        "the dims overflow: more elements than one tensor can hold",
        `at most ${MAX_ELEMENTS} elements`,
        formatShape(dims),
      );
  }
  return count;
}

const BYTES: Partial<Record<ElemType, number>> = {
  float32: 4,
  float64: 8,
  int64: 8,
  int32: 4,
  bool: 1,
  float16: 2,
  int8: 1,
  uint8: 1,
};

export function readTensor(t: Obj, subject: string, options: ReadOptions): HostTensor {
  const code = Number(t["data_type"] ?? 0);
  const dtype = ONNX_ELEM[code];
  if (!dtype)
    throw new OnnxImportError(
      `${subject}.data_type`,
      "an element type the importer does not read",
      "FLOAT, FLOAT16, DOUBLE, INT64, INT32, INT8, UINT8 or BOOL",
      ONNX_ELEM_NAMES[code] ?? String(code),
    );
  const dims = ((t["dims"] as unknown[]) ?? []).map(Number);
  const count = checkDims(dims, subject);
  let raw = t["raw_data"] as Uint8Array | undefined;
  if (Number(t["data_location"] ?? 0) === 1) raw = externalBytes(t, subject, options);
  if (raw !== undefined) {
    const want = count * BYTES[dtype]!;
    if (raw.length !== want)
      throw new OnnxImportError(
        `${subject}.raw_data`,
        `the data does not match the dims ${formatShape(dims)} of ${dtype}`,
        `${want} bytes`,
        `${raw.length} bytes`,
      );
    return { dtype: dtype === "float16" ? "float32" : dtype, shape: dims, data: fromRaw(dtype, raw, count) };
  }
  // float16 values sit in int32_data as their 16 bits (onnx.proto).
  const field =
    dtype === "float32"
      ? "float_data"
      : dtype === "float64"
        ? "double_data"
        : dtype === "int64"
          ? "int64_data"
          : "int32_data";
  const values = (t[field] as number[] | undefined) ?? [];
  if (values.length !== count)
    throw new OnnxImportError(
      `${subject}.${field}`,
      `the data does not match the dims ${formatShape(dims)}`,
      `${count} values`,
      `${values.length} values`,
    );
  if (dtype === "float16") return { dtype: "float32", shape: dims, data: Float32Array.from(values, halfToFloat) };
  return {
    dtype,
    shape: dims,
    data: dtype === "float32" ? Float32Array.from(values) : Float64Array.from(values, Number),
  };
}

function externalBytes(t: Obj, subject: string, options: ReadOptions): Uint8Array {
  const entries = new Map(
    ((t["external_data"] as Obj[]) ?? []).map((e) => [String(e["key"] ?? ""), String(e["value"] ?? "")]),
  );
  const location = entries.get("location");
  if (!location)
    throw new OnnxImportError(
      `${subject}.external_data`,
      "external data without a location",
      "a location entry",
      "none",
    );
  const given = options.externalData;
  const file =
    typeof given === "function"
      ? given(location)
      : given && Object.hasOwn(given, location)
        ? given[location]
        : undefined;
  if (!file)
    throw new OnnxImportError(
      `${subject}.external_data`,
      `the tensor's data is in another file that was not given`,
      `externalData: { "${location}": bytes }`,
      location,
    );
  const offset = entries.has("offset") ? Number(entries.get("offset")) : 0;
  const length = entries.has("length") ? Number(entries.get("length")) : file.length - offset;
  if (
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(length) ||
    offset < 0 ||
    length < 0 ||
    offset + length > file.length
  ) {
    throw new OnnxImportError(
      `${subject}.external_data`,
      `offset and length must lie inside ${location}`,
      `within ${file.length} bytes`,
      `offset ${entries.get("offset")}, length ${entries.get("length")}`,
    );
  }
  return file.subarray(offset, offset + length);
}

function fromRaw(dtype: ElemType, raw: Uint8Array, count: number): Float32Array | Float64Array {
  // Copied into an aligned buffer first: raw_data may sit at any offset of the file's bytes.
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  const buf = copy.buffer;
  switch (dtype) {
    case "float32":
      return new Float32Array(buf, 0, count);
    case "float64":
      return new Float64Array(buf, 0, count);
    case "int32":
      return Float64Array.from(new Int32Array(buf, 0, count));
    case "int64":
      return Float64Array.from(new BigInt64Array(buf, 0, count), Number);
    case "float16":
      return Float32Array.from(new Uint16Array(buf, 0, count), halfToFloat);
    case "int8":
      return Float64Array.from(new Int8Array(buf, 0, count));
    case "uint8":
      return Float64Array.from(copy);
    case "bool":
      return Float64Array.from(copy, (b) => (b ? 1 : 0));
  }
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
