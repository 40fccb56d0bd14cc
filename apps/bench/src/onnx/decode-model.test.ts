import { createCpuExecutor } from "@attngraph/executor-cpu";
import { decodeModel } from "@attngraph/onnx";
import { describe, expect, it } from "vitest";
import { decodeRunner } from "../impls/attngraph-decode.js";
import { modelFeeds } from "../impls/ort.js";
import { makeDecodeProblem } from "../problem.js";
import { maxAbsDiff, referenceDecode } from "../test-reference.js";
import { buildDecodeMhaModel } from "./decode-mha-model.js";
import {
  buildDecodeModel,
  decodePast,
  ONNX_INPUT,
  ONNX_OUTPUT,
  ONNX_PAST_KEY,
  ONNX_PAST_VALUE,
} from "./decode-model.js";

describe("ONNX decode model", () => {
  const p = makeDecodeProblem({ b: 2, t: 6, d: 8, h: 2 });

  it("encodes opset 17: new-token projections, Concat of past and new keys and values, no mask", () => {
    const m = decodeModel(buildDecodeModel(p)) as {
      opset_import: { version: number; domain?: string }[];
      graph: {
        node: { op_type: string; input: string[] }[];
        initializer: { name: string }[];
        input: { name: string }[];
        output: { name: string }[];
      };
    };
    expect(m.opset_import.map((o) => o.version)).toEqual([17]);
    const ops = m.graph.node.map((n) => n.op_type);
    expect(ops.filter((o) => o === "MatMul")).toHaveLength(6); // q, k, v, scores, weighted sum, out_proj
    expect(m.graph.node.filter((n) => n.op_type === "Concat").map((n) => n.input)).toEqual([
      [ONNX_PAST_KEY, "k.heads"],
      [ONNX_PAST_VALUE, "v.heads"],
    ]);
    expect(m.graph.initializer.map((i) => i.name)).not.toContain("causal_mask");
    expect(m.graph.input.map((i) => i.name)).toEqual([ONNX_INPUT, ONNX_PAST_KEY, ONNX_PAST_VALUE]);
    expect(m.graph.output.map((o) => o.name)).toEqual([ONNX_OUTPUT]);
  });

  it("has a contrib twin: MultiHeadAttention with the same past inputs, giving the same output on onnxruntime-node", async () => {
    const m = decodeModel(buildDecodeMhaModel(p)) as {
      opset_import: { domain?: string }[];
      graph: { node: { op_type: string; domain?: string; input: string[] }[] };
    };
    expect(m.opset_import.map((o) => o.domain ?? "")).toEqual(["", "com.microsoft"]);
    const mha = m.graph.node.find((n) => n.op_type === "MultiHeadAttention")!;
    expect([mha.domain, mha.input.slice(6)]).toEqual(["com.microsoft", [ONNX_PAST_KEY, ONNX_PAST_VALUE]]);
    const ort = await import("onnxruntime-node");
    const feeds = Object.fromEntries(
      Object.entries(modelFeeds(p)).map(([n, { data, dims }]) => [n, new ort.Tensor("float32", data, dims)]),
    );
    const outputs: Float32Array[] = [];
    for (const model of [buildDecodeModel(p), buildDecodeMhaModel(p)]) {
      const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
      outputs.push((await session.run(feeds))[ONNX_OUTPUT]!.data as Float32Array);
      await session.release();
    }
    expect(maxAbsDiff(outputs[1]!, outputs[0]!)).toBeLessThan(1e-6);
    expect(maxAbsDiff(outputs[1]!, referenceDecode(p))).toBeLessThan(1e-5);
  });

  it("its past is what attngraph's cache holds after the prompt", async () => {
    const runner = await decodeRunner(createCpuExecutor(), p, 1);
    const { b, t, d, h } = p.shape;
    const D = d / h;
    const cached = new Map<string, Float32Array>();
    const sub = runner.decoder.session
      .tap(["k.cache", "v.cache"])
      .subscribe((e) => cached.set(e.node, e.tensor.toFloat32Array()));
    await runner.run();
    sub.unsubscribe();
    await runner.dispose();
    // A step's k.cache / v.cache are all T + 1 positions, [b, H, T + 1, D]; the first T of each head are the past.
    const firstT = (all: Float32Array) => {
      const out = new Float32Array(b * h * t * D);
      for (let bh = 0; bh < b * h; bh++) out.set(all.subarray(bh * (t + 1) * D, bh * (t + 1) * D + t * D), bh * t * D);
      return out;
    };
    const past = decodePast(p);
    expect(maxAbsDiff(firstT(cached.get("k.cache")!), past.key)).toBeLessThan(1e-6);
    expect(maxAbsDiff(firstT(cached.get("v.cache")!), past.value)).toBeLessThan(1e-6);
  });

  it("runs on onnxruntime-node and matches attngraph's cpu decoder and the float64 reference", async () => {
    const ort = await import("onnxruntime-node");
    const session = await ort.InferenceSession.create(buildDecodeModel(p), { intraOpNumThreads: 1 });
    const feeds = Object.fromEntries(
      Object.entries(modelFeeds(p)).map(([n, { data, dims }]) => [n, new ort.Tensor("float32", data, dims)]),
    );
    const y = (await session.run(feeds))[ONNX_OUTPUT]!.data as Float32Array;
    await session.release();
    const cpu = await decodeRunner(createCpuExecutor(), p, 1);
    const fromCpu = await cpu.run();
    await cpu.dispose();
    expect(y).toHaveLength(2 * 8);
    expect(maxAbsDiff(y, fromCpu)).toBeLessThan(1e-5);
    expect(maxAbsDiff(y, referenceDecode(p))).toBeLessThan(1e-5);
  });
});
