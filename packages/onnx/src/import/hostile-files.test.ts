// Hostile and broken ONNX files: every one is refused with a typed error (OnnxImportError, OnnxUnsupportedOpsError,
// or the graph's own GraphValidationError for a node that does not fit), naming the field or node, in bounded time
// and memory. None may crash, hang, allocate what a declared size claims, or build a partial graph.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import {
  DataType,
  encodeModel,
  floatTensor,
  floatValueInfo,
  int64Tensor,
  node,
  valueInfo,
  type ModelParts,
  type NodeMsg,
  type TensorMsg,
} from "../proto/proto.js";
import { importOnnx, type ImportOptions } from "./import-onnx.js";

/** A small valid model: y = Softmax(x · W) for x [2, 3]. */
function base(over: Partial<ModelParts> = {}): ModelParts {
  return {
    graphName: "hostile",
    nodes: [node("MatMul", "mm", ["x", "W"], ["h"]), node("Softmax", "sm", ["h"], ["y"], { axis: -1 })],
    initializers: [floatTensor("W", [3, 4], new Float32Array(12).fill(0.5))],
    inputs: [floatValueInfo("x", [2, 3])],
    outputs: [floatValueInfo("y", [2, 4])],
    ...over,
  };
}

const model = (over: Partial<ModelParts> = {}) => encodeModel(base(over));
const withNodes = (nodes: NodeMsg[], inits: TensorMsg[] = [], outputs = [floatValueInfo("y", [2, 4])]) =>
  model({ nodes, initializers: [...base().initializers, ...inits], outputs });
const rawTensor = (t: object) => t as unknown as TensorMsg;
const valid = model();

/**
 * Nested If bodies `depth` deep, written by hand (the writer's schema has no subgraphs on purpose): GraphProto { node:
 * NodeProto { op_type "If", output "y", attribute { name "then_branch", g: <the next graph> } } }. Built from the
 * inside out as prefixes and suffixes, so that making it is linear in its size.
 */
function nestedIf(depth: number): Uint8Array {
  const text = (s: string) => [...new TextEncoder().encode(s)];
  const key = (field: number) => (field << 3) | 2;
  const prefixes: number[][] = [];
  const suffixes: number[][] = [];
  let inner = 0; // bytes of the innermost graph so far
  for (let i = 0; i < depth; i++) {
    // attribute = name + g(inner); node = op_type + attribute + output; graph = node
    const name = [key(1), ...varint(11), ...text("then_branch")];
    const attrLen = name.length + 1 + varint(inner).length + inner;
    const opType = [key(4), 2, ...text("If")];
    const output = [key(2), 1, ...text("y")];
    const nodeLen = opType.length + 1 + varint(attrLen).length + attrLen + output.length;
    prefixes.push([
      key(1),
      ...varint(nodeLen),
      ...opType,
      key(5),
      ...varint(attrLen),
      ...name,
      key(6),
      ...varint(inner),
    ]);
    suffixes.push(output);
    inner = 1 + varint(nodeLen).length + nodeLen;
  }
  const opset = [key(8), 4, key(1), 0, 0x10, 17];
  const head = [...opset, key(7), ...varint(inner)];
  const parts = [head, ...prefixes.reverse(), ...suffixes];
  return Uint8Array.from(parts.flat());
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

function random(n: number, seed: number): Uint8Array {
  let s = seed;
  return Uint8Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) >>> 0) >>> 16) & 255);
}

const cases: [string, unknown, RegExp, ImportOptions?][] = [
  ["not bytes", "model.onnx", /a Uint8Array/],
  ["empty", new Uint8Array(0), /empty/],
  ["random bytes", random(4096, 7), /not an ONNX ModelProto|no graph|opset|op type/],
  ["truncated at half", valid.subarray(0, valid.length >> 1), /truncated or malformed/],
  ["truncated at 10 bytes", valid.subarray(0, 10), /truncated or malformed|no graph/],
  ["a varint that never ends", Uint8Array.from([0x08, ...Array(12).fill(0xff)]), /truncated or malformed/],
  ["a field claiming 2 GiB", Uint8Array.from([0x3a, 0xff, 0xff, 0xff, 0xff, 0x07, 1, 2, 3]), /truncated or malformed/],
  ["no graph", encodeModel(base()).subarray(0, 2), /no graph|truncated/],
  [
    "no default opset",
    model({ opsetImports: [{ domain: "com.microsoft", version: 1 }] }),
    /imports no version of the default ONNX domain/,
  ],
  ["opset 7", model({ opsetImports: [{ domain: "", version: 7 }] }), /opset whose ops the importer does not read/],
  ["a node without op type", withNodes([{ ...node("X", "n0", ["x"], ["y"]), op_type: "" }]), /without an op type/],
  [
    "unsupported op types, all listed",
    withNodes([
      node("Loop", "l1", [], ["a"]),
      node("Loop", "l2", [], ["b"]),
      node("NonMaxSuppression", "nms", [], ["c"]),
      node("Foo", "f", ["x"], ["y"], {}, "my.domain"),
    ]),
    /Loop ×2 \(l1, l2\).*NonMaxSuppression ×1.*my\.domain\.Foo/,
  ],
  ["subgraphs nested 20000 deep", nestedIf(20000), /If ×1/],
  [
    "raw_data shorter than the dims",
    model({
      initializers: [rawTensor({ name: "W", dims: [3, 4], data_type: DataType.FLOAT, raw_data: new Uint8Array(40) })],
    }),
    /initializer W\.raw_data.*48 bytes.*40 bytes/,
  ],
  [
    "float_data count off",
    model({ initializers: [rawTensor({ name: "W", dims: [3, 4], data_type: DataType.FLOAT, float_data: [1, 2, 3] })] }),
    /initializer W\.float_data.*12 values.*3 values/,
  ],
  [
    "a negative dim",
    model({
      initializers: [rawTensor({ name: "W", dims: [3, -4], data_type: DataType.FLOAT, raw_data: new Uint8Array(0) })],
    }),
    /W\.dims\[1\].*-4/,
  ],
  [
    "dims that overflow",
    model({
      initializers: [
        rawTensor({ name: "W", dims: [65536, 65536, 4], data_type: DataType.FLOAT, raw_data: new Uint8Array(0) }),
      ],
    }),
    /dims overflow/,
  ],
  [
    "one dim of 2^40",
    model({
      initializers: [rawTensor({ name: "W", dims: [2 ** 40], data_type: DataType.FLOAT, raw_data: new Uint8Array(0) })],
    }),
    /dims overflow/,
  ],
  [
    "a string tensor",
    model({ initializers: [rawTensor({ name: "W", dims: [1], data_type: 8, raw_data: new Uint8Array(1) })] }),
    /W\.data_type.*STRING/,
  ],
  [
    "external data not given",
    model({
      initializers: [
        rawTensor({
          name: "W",
          dims: [3, 4],
          data_type: DataType.FLOAT,
          data_location: 1,
          external_data: [{ key: "location", value: "weights.bin" }],
        }),
      ],
    }),
    /another file that was not given.*weights\.bin/,
  ],
  ["external data past its file", externalW(100), /inside w\.bin/, { externalData: { "w.bin": new Uint8Array(64) } }],
  [
    "external data without a location",
    model({
      initializers: [
        rawTensor({ name: "W", dims: [3, 4], data_type: DataType.FLOAT, data_location: 1, external_data: [] }),
      ],
    }),
    /without a location/,
  ],
  [
    "two initializers of one name",
    model({
      initializers: [floatTensor("W", [3, 4], new Float32Array(12)), floatTensor("W", [3, 4], new Float32Array(12))],
    }),
    /two initializers of one name/,
  ],
  [
    "an input never defined",
    withNodes([node("MatMul", "mm", ["x", "nowhere"], ["h"]), node("Softmax", "sm", ["h"], ["y"])]),
    /input nowhere is not defined/,
  ],
  [
    "symbolic dims not given",
    model({ inputs: [valueInfo("x", DataType.FLOAT, ["batch", 3])] }),
    /dims the file leaves open.*x\[0\] \(batch\)/,
  ],
  [
    "a dim given as -1",
    model({ inputs: [valueInfo("x", DataType.FLOAT, ["batch", 3])] }),
    /dims\.batch.*-1/,
    { dims: { batch: -1 } },
  ],
  ["an input of type string", model({ inputs: [valueInfo("x", 8, [2, 3])] }), /input x.*STRING/],
  ["a shape that disagrees with the file", valid, /shapes\.x\[1\].*fixes this dim/, { shapes: { x: [2, 5] } }],
  [
    "Reshape to the wrong element count",
    withNodes([node("Reshape", "r", ["x", "s"], ["y"])], [int64Tensor("s", [5, 5])], [floatValueInfo("y", [5, 5])]),
    /node r \(Reshape\).*6 elements/,
  ],
  [
    "ConstantOfShape of 2^40 elements",
    withNodes(
      [node("ConstantOfShape", "c", ["s"], ["z"]), node("Add", "a", ["x", "z"], ["y"])],
      [int64Tensor("s", [1048576, 1048576])],
    ),
    /node c \(ConstantOfShape\).*too large/,
  ],
  [
    "Range of 2^35 values",
    withNodes(
      [node("Range", "r", ["s0", "s1", "s2"], ["z"]), node("Add", "a", ["x", "z"], ["y"])],
      [int64Tensor("s0", [0], []), int64Tensor("s1", [2 ** 35], []), int64Tensor("s2", [1], [])],
    ),
    /node r \(Range\).*too large/,
  ],
  [
    "Expand to a huge shape",
    withNodes(
      [node("Expand", "e", ["W", "s"], ["z"]), node("Add", "a", ["x", "z"], ["y"])],
      [int64Tensor("s", [100000, 100000, 3, 4])],
    ),
    /node e \(Expand\).*too large/,
  ],
  [
    "Gather out of range",
    withNodes([node("Gather", "g", ["x", "i"], ["y"])], [int64Tensor("i", [7])]),
    /node g \(Gather\): index 7 is out of range/,
  ],
  [
    "Softmax over a middle axis",
    withNodes(
      [node("Reshape", "r", ["x", "s"], ["x3"]), node("Softmax", "sm", ["x3"], ["y"], { axis: 1 })],
      [int64Tensor("s", [1, 2, 3])],
    ),
    /node sm \(Softmax\).*unsupported: Softmax over axis 1/,
  ],
  [
    "MatMul whose dims disagree",
    withNodes([node("MatMul", "mm", ["x", "V"], ["y"])], [floatTensor("V", [5, 4], new Float32Array(20))]),
    /weight columns must equal|mm/,
  ],
  [
    "Concat of runtime values",
    withNodes([node("Concat", "c", ["x", "x"], ["y"], { axis: 0 })]),
    /node c \(Concat\).*unsupported/,
  ],
  ["an output that is a constant", withNodes([node("Identity", "i", ["W"], ["y"])]), /output y.*constant/],
  ["an output no node writes", withNodes([node("Softmax", "sm", ["x"], ["z"])]), /output y.*no node makes this output/],
  [
    "Split sizes that do not add up",
    withNodes([node("Split", "sp", ["x", "s"], ["y", "y2"], { axis: 1 })], [int64Tensor("s", [1, 1])]),
    /node sp \(Split\).*add up/,
  ],
  ["Transpose with a bad perm", withNodes([node("Transpose", "t", ["x"], ["y"], { perm: [0, 0] })]), /perm|t/],
  [
    "Slice with step 0",
    withNodes(
      [node("Slice", "s", ["W", "a", "b", "c", "d"], ["z"]), node("MatMul", "mm", ["x", "z"], ["y"])],
      [int64Tensor("a", [0]), int64Tensor("b", [3]), int64Tensor("c", [0]), int64Tensor("d", [0])],
    ),
    /node s \(Slice\).*step/,
  ],
];

/** The base model with W [3, 4] float32 stored in "w.bin", 48 bytes from `offset`. */
function externalW(offset: number) {
  const location = [
    { key: "location", value: "w.bin" },
    { key: "offset", value: String(offset) },
    { key: "length", value: "48" },
  ];
  return model({
    initializers: [
      rawTensor({ name: "W", dims: [3, 4], data_type: DataType.FLOAT, data_location: 1, external_data: location }),
    ],
  });
}

describe("hostile ONNX files", () => {
  it("has at least 30 of them", () => expect(cases.length).toBeGreaterThanOrEqual(30));

  it.each(cases)("%s: a typed error", (_name, bytes, message, options) => {
    let error: unknown;
    try {
      importOnnx(bytes as Uint8Array, options ?? {});
    } catch (e) {
      error = e;
    }
    expect(AttnGraphError.isInstance(error), `not an AttnGraphError: ${String(error)}`).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.length).toBeLessThan(600);
  });

  it("the valid base model imports (so each refusal above is about its one defect)", () => {
    const imported = importOnnx(valid);
    expect(imported.graph.nodes.map((n) => n.kind)).toEqual(["projection", "softmax"]);
  });

  it("external data inside its file is read", () => {
    const w = new Float32Array(12).fill(0.25);
    const file = new Uint8Array(16 + 48);
    file.set(new Uint8Array(w.buffer), 16);
    const m = externalW(16);
    const imported = importOnnx(m, { externalData: { "w.bin": file } });
    expect(Array.from(imported.weights["W.T"]!.toFloat32Array())).toEqual(Array(12).fill(0.25));
  });
});
