// Hand-written ONNX graphs in the forms exporters write, each imported and run on the cpu executor against
// onnxruntime-node running the same file: Gemm, the decomposed LayerNorm, both GELU forms, SiLU, attention with a 0/1
// mask, an additive mask and a divided scale, and onnxruntime's contrib ops. A form that matches a pattern's shape
// but not its constants is built node by node (and refused by name where attngraph has no op).
import { describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, compare, Tensor } from "@attngraph/tensor";
import * as ort from "onnxruntime-node";
import {
  DataType,
  encodeModel,
  floatTensor,
  floatValueInfo,
  int64Tensor,
  node,
  valueInfo,
  type AttrValue,
  type NodeMsg,
  type TensorMsg,
} from "../proto/proto.js";
import { randomTensor } from "../test-against-cpu.js";
import { runInOrt } from "../test-ort.js";
import { importOnnx, type ImportedOnnx } from "./import-onnx.js";

const scalar = (name: string, v: number) => floatTensor(name, [], Float32Array.of(v));

/** A node of onnxruntime's contrib domain, com.microsoft. */
function contribNode(
  op: string,
  name: string,
  inputs: readonly string[],
  outputs: readonly string[],
  attrs: Readonly<Record<string, AttrValue>> = {},
): NodeMsg {
  return node(op, name, inputs, outputs, attrs, "com.microsoft");
}

interface Spec {
  nodes: NodeMsg[];
  inits: TensorMsg[];
  inputs: Record<string, readonly number[]>;
  outputs: Record<string, readonly number[]>;
  contrib?: boolean;
}

function build(s: Spec): Uint8Array {
  return encodeModel({
    graphName: "patterns",
    nodes: s.nodes,
    initializers: s.inits,
    inputs: Object.entries(s.inputs).map(([n, d]) => floatValueInfo(n, d as number[])),
    outputs: Object.entries(s.outputs).map(([n, d]) => floatValueInfo(n, d as number[])),
    opsetImports: [{ domain: "", version: 17 }, ...(s.contrib ? [{ domain: "com.microsoft", version: 1 }] : [])],
  });
}

/** Imports, runs on cpu and in onnxruntime, expects every output close; returns the import. */
async function expectLikeOrt(s: Spec, seed = 1): Promise<ImportedOnnx> {
  const model = build(s);
  const inputs = Object.fromEntries(Object.entries(s.inputs).map(([n, d], i) => [n, randomTensor(d, seed + i, 2)]));
  const imported = importOnnx(model);
  const session = await compile(imported.graph, { executors: [createCpuExecutor()], weights: imported.weights });
  const got = await session.run(inputs).finally(() => session.dispose());
  const want = await runInOrt(model, inputs, Object.keys(s.outputs));
  for (const name of Object.keys(s.outputs)) {
    const r = compare(got[name]!, want[name] as Tensor, { abs: 2e-5, rel: 2e-4 });
    expect(r.ok, `${name}: ${r.failures} differ, worst ${JSON.stringify(r.worst)} ${r.shapeMismatch ?? ""}`).toBe(true);
  }
  return imported;
}

const w = (name: string, shape: number[], seed: number) =>
  floatTensor(name, shape, randomTensor(shape, seed, 0.5).toFloat32Array());

describe("patterns against onnxruntime", () => {
  it("Gemm (transB, alpha, beta) then Relu", async () => {
    const im = await expectLikeOrt({
      nodes: [
        node("Gemm", "fc", ["x", "W", "b"], ["h"], { transB: 1, alpha: { float: 0.5 }, beta: { float: 2 } }),
        node("Relu", "act", ["h"], ["y"]),
      ],
      inits: [w("W", [5, 4], 2), w("b", [5], 3)],
      inputs: { x: [3, 4] },
      outputs: { y: [3, 5] },
    });
    expect(im.graph.nodes.map((n) => n.kind)).toEqual(["projection", "relu"]);
  });

  it("LayerNorm decomposed (ReduceMean, Sub, Pow, Add eps, Sqrt, Div, · gamma, + beta), tanh GELU with Pow, SiLU", async () => {
    const im = await expectLikeOrt({
      nodes: [
        node("ReduceMean", "ln/mean", ["x"], ["m"], { axes: [-1] }),
        node("Sub", "ln/sub", ["x", "m"], ["d"]),
        node("Pow", "ln/pow", ["d", "two"], ["d2"]),
        node("ReduceMean", "ln/var", ["d2"], ["v"], { axes: [-1] }),
        node("Add", "ln/eps", ["v", "eps"], ["ve"]),
        node("Sqrt", "ln/sqrt", ["ve"], ["s"]),
        node("Div", "ln/div", ["d", "s"], ["n"]),
        node("Mul", "ln/gamma", ["n", "g"], ["ng"]),
        node("Add", "ln/beta", ["ng", "beta"], ["ln"]),
        node("Pow", "gelu/cube", ["ln", "three"], ["c3"]),
        node("Mul", "gelu/k1", ["c3", "k1"], ["c3k"]),
        node("Add", "gelu/inner", ["ln", "c3k"], ["in"]),
        node("Mul", "gelu/k2", ["in", "k2"], ["ink"]),
        node("Tanh", "gelu/tanh", ["ink"], ["t"]),
        node("Add", "gelu/one", ["t", "one"], ["t1"]),
        node("Mul", "gelu/half", ["ln", "half"], ["xh"]),
        node("Mul", "gelu/out", ["xh", "t1"], ["ge"]),
        node("Sigmoid", "silu/sig", ["ge"], ["sg"]),
        node("Mul", "silu/out", ["ge", "sg"], ["y"]),
      ],
      inits: [
        scalar("two", 2),
        scalar("eps", 1e-5),
        w("g", [6], 4),
        w("beta", [6], 5),
        scalar("three", 3),
        scalar("k1", 0.044715),
        scalar("k2", Math.sqrt(2 / Math.PI)),
        scalar("one", 1),
        scalar("half", 0.5),
      ],
      inputs: { x: [2, 3, 6] },
      outputs: { y: [2, 3, 6] },
    });
    expect(im.graph.nodes.map((n) => n.kind)).toEqual(["layer-norm", "gelu", "silu"]);
    expect(im.report.patterns).toEqual({ "layer-norm": 1, gelu: 1, silu: 1 });
  });

  it("attention: Div scale, a 0/1 mask hiding where false (HF fill finfo.min), Softmax, MatMul", async () => {
    const keep = Float32Array.from({ length: 16 }, (_, i) => ((i * 7) % 5 === 0 ? 0 : 1));
    keep[0] = 1;
    const im = await expectLikeOrt({
      nodes: [
        node("Transpose", "att/kT", ["k"], ["kt"], { perm: [0, 1, 3, 2] }),
        node("MatMul", "att/qk", ["q", "kt"], ["s"]),
        node("Div", "att/scale", ["s", "sqrtd"], ["ss"]),
        node("Cast", "att/cast", ["keep"], ["keepb"], { to: 9 }),
        node("Where", "att/mask", ["keepb", "ss", "fill"], ["m"]),
        node("Softmax", "att/softmax", ["m"], ["p"], { axis: -1 }),
        node("MatMul", "att/pv", ["p", "v"], ["y"]),
      ],
      inits: [scalar("sqrtd", 2), floatTensor("keep", [1, 1, 4, 4], keep), scalar("fill", -3.4028234663852886e38)],
      inputs: { q: [2, 2, 4, 4], k: [2, 2, 4, 4], v: [2, 2, 4, 4] },
      outputs: { y: [2, 2, 4, 4] },
    });
    expect(im.report.chains).toHaveLength(1);
    expect(im.report.chains[0]!.mask).toBe("0/1 mask [4, 4]");
  });

  it("attention with an additive bias after the scale", async () => {
    const im = await expectLikeOrt({
      nodes: [
        node("MatMul", "qk", ["q", "kt"], ["s"]),
        node("Mul", "scale", ["s", "c"], ["ss"]),
        node("Add", "bias", ["ss", "b"], ["sb"]),
        node("Softmax", "softmax", ["sb"], ["p"], { axis: -1 }),
        node("MatMul", "pv", ["p", "v"], ["y"]),
      ],
      inits: [scalar("c", 0.35), w("b", [2, 3, 5], 9)],
      inputs: { q: [1, 2, 3, 4], kt: [1, 2, 4, 5], v: [1, 2, 5, 4] },
      outputs: { y: [1, 2, 3, 4] },
    });
    expect(im.report.chains[0]!.mask).toBe("bias");
  });

  it("onnxruntime's contrib ops: Gelu, FastGelu with bias, BiasGelu, SkipLayerNormalization", async () => {
    const im = await expectLikeOrt({
      contrib: true,
      nodes: [
        contribNode("SkipLayerNormalization", "sln", ["x", "skip", "g", "beta", "bias"], ["n", "", "", "sum"], {
          epsilon: { float: 1e-5 },
        }),
        contribNode("Gelu", "gelu", ["n"], ["a"]),
        contribNode("FastGelu", "fast", ["a", "bias"], ["f"]),
        contribNode("BiasGelu", "biasgelu", ["f", "bias"], ["y"]),
      ],
      inits: [w("g", [6], 11), w("beta", [6], 12), w("bias", [6], 13)],
      inputs: { x: [2, 3, 6], skip: [2, 3, 6] },
      outputs: { y: [2, 3, 6], sum: [2, 3, 6] },
    });
    expect(im.graph.nodes.filter((n) => n.kind === "gelu")).toHaveLength(3);
  });

  it.each([0, 1])(
    "onnxruntime's Attention (packed QKV weights and bias, 2 heads, unidirectional %i) as an attention chain",
    async (unidirectional) => {
      const im = await expectLikeOrt({
        contrib: true,
        nodes: [contribNode("Attention", "attn", ["x", "W", "b"], ["y"], { num_heads: 2, unidirectional })],
        inits: [w("W", [6, 24], 21), w("b", [24], 22)],
        inputs: { x: [2, 5, 6] },
        outputs: { y: [2, 5, 8] },
      });
      expect(im.report.chains).toHaveLength(1);
      expect(im.report.chains[0]!.mask).toBe(unidirectional ? "causal bottom-right" : "none");
    },
  );

  it("onnxruntime's MultiHeadAttention (cross-attention, L != S, packed bias, a scale)", async () => {
    const im = await expectLikeOrt({
      contrib: true,
      nodes: [
        contribNode("MultiHeadAttention", "mha", ["q", "k", "v", "bias"], ["y"], {
          num_heads: 4,
          scale: { float: 0.3 },
        }),
      ],
      inits: [w("bias", [24], 23)],
      inputs: { q: [2, 3, 8], k: [2, 7, 8], v: [2, 7, 8] },
      outputs: { y: [2, 3, 8] },
    });
    expect(im.report.chains).toHaveLength(1);
  });

  it("contrib attention forms beyond that are refused by name", () => {
    const model = build({
      contrib: true,
      nodes: [contribNode("Attention", "attn", ["x", "W", "b", "mask"], ["y"], { num_heads: 2 })],
      inits: [w("W", [6, 24], 21), w("b", [24], 22), w("mask", [2, 5], 3)],
      inputs: { x: [2, 5, 6] },
      outputs: { y: [2, 5, 8] },
    });
    expect(() => importOnnx(model)).toThrow(
      /node attn \(Attention\): unsupported: Attention with mask_index \(input 3\)/,
    );
  });

  it("a GELU-shaped product whose constants are not GELU's is built node by node: Erf is refused by name", () => {
    const model = build({
      nodes: [
        node("Div", "g/div", ["x", "c"], ["d"]),
        node("Erf", "g/erf", ["d"], ["e"]),
        node("Add", "g/add", ["e", "one"], ["e1"]),
        node("Mul", "g/mul", ["x", "e1"], ["m"]),
        node("Mul", "g/half", ["m", "half"], ["y"]),
      ],
      inits: [scalar("c", 2), scalar("one", 1), scalar("half", 0.5)],
      inputs: { x: [2, 3] },
      outputs: { y: [2, 3] },
    });
    let error: unknown;
    try {
      importOnnx(model);
    } catch (e) {
      error = e;
    }
    expect(AttnGraphError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).toMatch(/node g\/erf \(Erf\): unsupported: Erf of a runtime value/);
  });

  it("Reshape with a 0 and a -1, Unsqueeze, Squeeze, Flatten, Slice and Split of runtime values", async () => {
    await expectLikeOrt({
      nodes: [
        node("Reshape", "r", ["x", "shape"], ["r1"]),
        node("Unsqueeze", "u", ["r1", "ax0"], ["u1"]),
        node("Squeeze", "s", ["u1", "ax0"], ["s1"]),
        node("Slice", "sl", ["s1", "st", "en", "axs"], ["sl1"]),
        node("Split", "sp", ["sl1", "sizes"], ["a", "b"], { axis: -1 }),
        node("Flatten", "f", ["a"], ["y"], { axis: 1 }),
        node("Transpose", "t", ["b"], ["z"]),
      ],
      inits: [
        int64Tensor("shape", [0, -1, 4]),
        int64Tensor("ax0", [0]),
        int64Tensor("st", [1]),
        int64Tensor("en", [100]),
        int64Tensor("axs", [1]),
        int64Tensor("sizes", [1, 3]),
      ],
      inputs: { x: [2, 3, 8] },
      outputs: { y: [2, 5], z: [3, 5, 2] },
    });
  });
});

describe("SoftmaxCrossEntropyLoss (torch's F.cross_entropy) against onnxruntime", () => {
  it.each([
    ["mean", [4, 5], [4]],
    ["sum", [4, 5], [4]],
    ["none", [2, 5, 3], [2, 3]],
    ["mean", [2, 5, 3], [2, 3]],
  ] as const)("reduction %s, scores %j, ignore_index 1", async (reduction, scoresShape, labelsShape) => {
    const model = encodeModel({
      graphName: "ce",
      nodes: [node("SoftmaxCrossEntropyLoss", "ce", ["scores", "labels"], ["loss"], { reduction, ignore_index: 1 })],
      initializers: [],
      inputs: [floatValueInfo("scores", [...scoresShape]), valueInfo("labels", DataType.INT64, [...labelsShape])],
      outputs: [valueInfo("loss", DataType.FLOAT, reduction === "none" ? [...labelsShape] : [])],
    });
    const scores = randomTensor(scoresShape, 31, 3);
    const count = labelsShape.reduce((a, d) => a * d, 1);
    const labels = Array.from({ length: count }, (_, i) => (i * 3) % 5);
    const session = await ort.InferenceSession.create(model);
    const want = (
      await session.run({
        scores: new ort.Tensor("float32", scores.toFloat32Array(), [...scoresShape]),
        labels: new ort.Tensor("int64", BigInt64Array.from(labels, BigInt), [...labelsShape]),
      })
    )["loss"]!;
    await session.release();
    const imported = importOnnx(model);
    const s = await compile(imported.graph, { executors: [createCpuExecutor()], weights: imported.weights });
    const got = await s.run({ scores, labels: Tensor.int32(labels, [...labelsShape]) }).finally(() => s.dispose());
    const r = compare(got["loss"]!, Tensor.from(want.data as Float32Array, want.dims.map(Number)), {
      abs: 1e-5,
      rel: 1e-5,
    });
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
  });
});

describe("tensors of every element type read as ONNX stores them", () => {
  it("float16 initializers and int32_data / float_data fields", async () => {
    const half = Uint16Array.of(0x3c00, 0xc000, 0x3800, 0x0000, 0x7c00 & 0x3bff, 0x3555); // 1, -2, 0.5, 0, ~0.9995, ~0.333
    const model = encodeModel({
      graphName: "types",
      nodes: [node("Cast", "c", ["h"], ["hf"], { to: 1 }), node("Mul", "m", ["x", "hf"], ["y"])],
      initializers: [{ name: "h", dims: [6], data_type: 10, raw_data: new Uint8Array(half.buffer) }],
      inputs: [floatValueInfo("x", [6])],
      outputs: [floatValueInfo("y", [6])],
    });
    const imported = importOnnx(model);
    const session = await compile(imported.graph, { executors: [createCpuExecutor()], weights: imported.weights });
    const out = await session.run({ x: Tensor.from([1, 1, 1, 1, 1, 1], [6]) }).finally(() => session.dispose());
    const got = Array.from(out["y"]!.toFloat32Array());
    expect(got.slice(0, 4)).toEqual([1, -2, 0.5, 0]);
    expect(got[5]).toBeCloseTo(1 / 3, 3);
  });
});
