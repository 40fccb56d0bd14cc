import { describe, expect, it } from "vitest";
import { attngraphImpl } from "../impls/attngraph.js";
import { tfjsImpl } from "../impls/tfjs.js";
import { makeBlockProblem } from "../problem.js";
import { erf, maxAbsDiff, referenceBlock } from "../test-reference.js";
import { buildBlockModel, ONNX_INPUT, ONNX_OUTPUT } from "./block-model.js";
import { decodeModel } from "@attngraph/onnx";

describe("ONNX transformer block model", () => {
  const shape = { b: 2, t: 6, d: 8, h: 2 };
  const p = makeBlockProblem(shape);

  it("encodes opset 17 with the block's nodes and its weights by state_dict name", () => {
    const m = decodeModel(buildBlockModel(p)) as {
      opset_import: { version: number }[];
      graph: {
        node: { op_type: string }[];
        initializer: { name: string; dims?: number[] }[];
        input: { name: string }[];
        output: { name: string }[];
      };
    };
    expect(m.opset_import.map((o) => o.version)).toEqual([17]);
    const ops = m.graph.node.map((n) => n.op_type);
    expect(ops.filter((o) => o === "LayerNormalization")).toHaveLength(2);
    expect(ops.filter((o) => o === "MatMul")).toHaveLength(6); // qkv, scores, weighted sum, out_proj, mlp.0, mlp.2
    expect(ops).toEqual(expect.arrayContaining(["Split", "Softmax", "Erf"]));
    const dims = Object.fromEntries(m.graph.initializer.map((i) => [i.name, i.dims ?? []]));
    expect(dims).toMatchObject({
      "ln1.weight": [8],
      "attention.qkv_proj.weight_T": [8, 24],
      "attention.out_proj.weight_T": [8, 8],
      "ln2.bias": [8],
      "mlp.0.weight_T": [8, 32],
      "mlp.0.bias": [32],
      "mlp.2.weight_T": [32, 8],
      "mlp.2.bias": [8],
      causal_mask: [6, 6],
    });
    expect(m.graph.input.map((i) => i.name)).toEqual([ONNX_INPUT]);
    expect(m.graph.output.map((o) => o.name)).toEqual([ONNX_OUTPUT]);
  });

  it("runs on onnxruntime-node and matches attngraph's cpu executor, tfjs-cpu and the float64 reference", async () => {
    const ort = await import("onnxruntime-node");
    const session = await ort.InferenceSession.create(buildBlockModel(p), { intraOpNumThreads: 1 });
    const out = await session.run({ [ONNX_INPUT]: new ort.Tensor("float32", p.x, [2, 6, 8]) });
    const y = out[ONNX_OUTPUT]!.data as Float32Array;
    await session.release();
    const fromCpu = await runOnce(attngraphImpl("cpu"));
    const fromTfjs = await runOnce(tfjsImpl("cpu"));
    const ref = referenceBlock(p);
    expect(y).toHaveLength(2 * 6 * 8);
    expect(maxAbsDiff(y, fromCpu)).toBeLessThan(1e-5);
    expect(maxAbsDiff(y, fromTfjs)).toBeLessThan(1e-5);
    expect(maxAbsDiff(y, ref)).toBeLessThan(1e-5);
    expect(maxAbsDiff(fromCpu, ref)).toBeLessThan(1e-5);
  });

  async function runOnce(impl: ReturnType<typeof tfjsImpl>): Promise<Float32Array> {
    const runner = await impl.setup(p, { threads: 1 });
    try {
      return await runner.run();
    } finally {
      await runner.dispose();
    }
  }
});

describe("the float64 reference's erf", () => {
  it("matches tabulated values to 1e-14", () => {
    const table: [number, number][] = [
      [0, 0],
      [0.1, 0.1124629160182849],
      [0.5, 0.5204998778130465],
      [1, 0.8427007929497149],
      [2, 0.9953222650189527],
      [2.5, 0.999593047982555],
      [3, 0.9999779095030014],
      [4, 0.9999999845827421],
    ];
    for (const [x, v] of table) {
      expect(Math.abs(erf(x) - v), `erf(${x})`).toBeLessThan(1e-14);
      expect(Math.abs(erf(-x) + v), `erf(${-x})`).toBeLessThan(1e-14);
    }
  });
});
