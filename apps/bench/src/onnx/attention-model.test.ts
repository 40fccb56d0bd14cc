import { describe, expect, it } from "vitest";
import { attngraphImpl } from "../impls/attngraph.js";
import { makeProblem } from "../problem.js";
import { maxAbsDiff, referenceAttention } from "../test-reference.js";
import { buildAttentionModel, ONNX_INPUT, ONNX_OUTPUT } from "./attention-model.js";
import { decodeModel, encodeModel, floatTensor, int64Tensor, node } from "@attngraph/onnx";

describe("ONNX attention model", () => {
  const p = makeProblem({ b: 2, t: 6, d: 8, h: 2 });

  it("encodes opset 17 with the attention's nodes and initializers", () => {
    const m = decodeModel(buildAttentionModel(p)) as {
      ir_version: number;
      opset_import: { version: number }[];
      graph: {
        node: { op_type: string }[];
        initializer: { name: string; dims?: number[] }[];
        input: { name: string }[];
        output: { name: string }[];
      };
    };
    expect(m.ir_version).toBe(8);
    expect(m.opset_import.map((o) => o.version)).toEqual([17]);
    const ops = m.graph.node.map((n) => n.op_type);
    expect(ops.filter((o) => o === "MatMul")).toHaveLength(6); // q, k, v, scores, weighted sum, out_proj
    expect(ops).toContain("Softmax");
    const dims = Object.fromEntries(m.graph.initializer.map((i) => [i.name, i.dims ?? []]));
    expect(dims).toMatchObject({ W_query_T: [8, 8], out_bias: [8], causal_mask: [6, 6], heads_shape: [4], scale: [] });
    expect(m.graph.input.map((i) => i.name)).toEqual([ONNX_INPUT]);
    expect(m.graph.output.map((o) => o.name)).toEqual([ONNX_OUTPUT]);
  });

  it("runs on onnxruntime-node and matches attngraph's cpu executor and the float64 reference", async () => {
    const ort = await import("onnxruntime-node");
    const session = await ort.InferenceSession.create(buildAttentionModel(p), { intraOpNumThreads: 1 });
    const out = await session.run({ [ONNX_INPUT]: new ort.Tensor("float32", p.x, [2, 6, 8]) });
    const y = out[ONNX_OUTPUT]!.data as Float32Array;
    await session.release();
    const cpu = await attngraphImpl("cpu").setup(p, { threads: 1 });
    const fromCpu = await cpu.run();
    await cpu.dispose();
    expect(maxAbsDiff(y, fromCpu)).toBeLessThan(1e-5);
    expect(maxAbsDiff(y, referenceAttention(p))).toBeLessThan(1e-5);
  });

  it("rejects initializers whose data does not fill their dims, and writes int64 little-endian", () => {
    expect(() => floatTensor("w", [2, 2], new Float32Array(3))).toThrow(/3 values for dims \[2, 2\]/);
    expect([...int64Tensor("s", [0, -1]).raw_data]).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255,
    ]);
    const bytes = encodeModel({
      graphName: "g",
      nodes: [node("Softmax", "s", ["a"], ["b"], { axis: -1 })],
      initializers: [],
      inputs: [],
      outputs: [],
    });
    const g = (decodeModel(bytes) as { graph: { node: { attribute: { name: string; i: number; type: number }[] }[] } })
      .graph;
    expect(g.node[0]!.attribute[0]).toMatchObject({ name: "axis", i: -1, type: 2 });
  });
});
