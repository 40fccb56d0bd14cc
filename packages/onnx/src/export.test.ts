// What an exported model declares (opsets, inputs, outputs, initializers) and how an export fails: a user op, a
// backward op, training-mode dropout and a missing weight each name the node (or weight) at fault.
import { describe, expect, it } from "vitest";
import { createOpRegistry, GraphBuilder } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { softcapOp } from "@attngraph/testkit";
import { exportOnnx, exportOnnxWithReport } from "./export.js";
import { decodeModel } from "./proto/proto.js";
import { exportFailure } from "./test-export-failure.js";
import { randomTensor } from "./test-against-cpu.js";
import { runInOrt } from "./test-ort.js";

function geluGraph() {
  const b = new GraphBuilder();
  const x = b.input("x", ["B", "T", 4]);
  const ids = b.input("ids", ["B", "T"], "int32");
  const table = b.weight("table", [6, 4]);
  const sum = b.add("add", "sum", { a: x, b: b.add("embedding", "embedded", { ids, weight: table }) });
  return b.output(b.add("gelu", "act", { x: sum }, { approximate: "none" })).build();
}

describe("exported model", () => {
  const weights = { table: randomTensor([6, 4], 1) };

  it("imports opset 17, plus com.microsoft 1 only when a contrib op is written", () => {
    const plain = decodeModel(exportOnnx(geluGraph(), weights, { contrib: "none" }));
    expect(plain["opset_import"]).toEqual([{ domain: "", version: 17 }]);
    const auto = exportOnnxWithReport(geluGraph(), weights);
    expect(decodeModel(auto.model)["opset_import"]).toEqual([
      { domain: "", version: 17 },
      { domain: "com.microsoft", version: 1 },
    ]);
    expect(auto.report.nodes.find((n) => n.node === "act")).toMatchObject({
      kind: "gelu",
      onnxOps: ["com.microsoft.Gelu"],
      contrib: true,
    });
    const domains = new Set(
      (decodeModel(auto.model)["graph"] as { node: { domain?: string }[] }).node.map((n) => n.domain ?? ""),
    );
    expect([...domains].sort()).toEqual(["", "com.microsoft"]);
  });

  it("declares inputs with their dtypes and symbolic dims, weights as initializers, outputs by node name", () => {
    const graph = decodeModel(exportOnnx(geluGraph(), weights))["graph"] as Record<string, unknown>;
    expect(graph["input"]).toEqual([
      {
        name: "x",
        type: {
          tensor_type: { elem_type: 1, shape: { dim: [{ dim_param: "B" }, { dim_param: "T" }, { dim_value: 4 }] } },
        },
      },
      {
        name: "ids",
        type: { tensor_type: { elem_type: 6, shape: { dim: [{ dim_param: "B" }, { dim_param: "T" }] } } },
      },
    ]);
    expect((graph["initializer"] as { name: string; dims: number[] }[]).find((t) => t.name === "table")?.dims).toEqual([
      6, 4,
    ]);
    expect((graph["output"] as { name: string }[]).map((o) => o.name)).toEqual(["act"]);
  });

  it("runs one model at any batch and length (symbolic dims stay symbolic)", async () => {
    const model = exportOnnx(geluGraph(), weights);
    for (const [b, t] of [
      [1, 2],
      [3, 5],
    ] as const) {
      const got = await runInOrt(
        model,
        {
          x: randomTensor([b, t, 4], 2),
          ids: Tensor.int32(
            Array.from({ length: b * t }, (_, i) => i % 6),
            [b, t],
          ),
        },
        ["act"],
      );
      expect(got["act"]!.shape).toEqual([b, t, 4]);
    }
  });
});

describe("export failures", () => {
  it("a user op fails naming the node and its kind", () => {
    const b = new GraphBuilder({ registry: createOpRegistry([softcapOp()]) });
    const g = b.output(b.add("softcap", "scores.capped", { x: b.input("x", [2, 3]) }, { cap: 0.5 })).build();
    const e = exportFailure(() => exportOnnx(g, {}));
    expect(e.code).toBe("onnx-export");
    expect(e.subject).toBe("scores.capped");
    expect(e.message).toMatch(/^scores\.capped: user op softcap has no ONNX form/);
  });

  it("a backward op fails naming the node, its kind and that it has no ONNX form yet", () => {
    const b = new GraphBuilder();
    const y = b.input("y", [2, 3]);
    const g = b.output(b.add("softmax-grad", "masked.grad", { y, grad: b.input("g", [2, 3]) }, { scale: 1 })).build();
    expect(exportFailure(() => exportOnnx(g, {})).message).toMatch(
      /^masked\.grad: op softmax-grad has no ONNX form yet/,
    );
  });

  it("the training step's clipping and accumulation ops fail naming the node and its kind, as the optimizer ops do", () => {
    const cases: [string, string, (b: GraphBuilder, g: string) => string][] = [
      ["g.sumsq", "sum-squares", (b, g) => b.add("sum-squares", "g.sumsq", { x: g }, {})],
      [
        "g.clipped",
        "clip-by-norm",
        (b, g) => b.add("clip-by-norm", "g.clipped", { x: g, sumSquares: b.input("t", [1]) }, { maxNorm: 1 }),
      ],
      [
        "g.acc.next",
        "grad-accumulate",
        (b, g) => b.add("grad-accumulate", "g.acc.next", { acc: g, grad: g, step: b.input("k", [1]) }, { scale: 0.5 }),
      ],
    ];
    for (const [node, kind, add] of cases) {
      const b = new GraphBuilder();
      const graph = b.output(add(b, b.input("g", [2, 3]))).build();
      expect(exportFailure(() => exportOnnx(graph, {})).message).toMatch(
        new RegExp(`^${node.replace(/\./g, "\\.")}: op ${kind} has no ONNX form yet`),
      );
    }
  });

  it("the Llama ops' backward ops (rms-norm-grad, rms-norm-weight-grad) fail naming the node and its kind", () => {
    for (const kind of ["rms-norm-grad", "rms-norm-weight-grad"]) {
      const b = new GraphBuilder();
      const g = b.input("g", [2, 3]);
      const graph = b.output(b.add(kind, "n.grad", { grad: g, x: b.input("x", [2, 3]) })).build();
      expect(exportFailure(() => exportOnnx(graph, {})).message).toMatch(
        new RegExp(`^n\\.grad: op ${kind} has no ONNX form yet`),
      );
    }
  });

  it("a decode graph's kv-append whose cache is not a weight, or with a fixed shift, fails naming the node", () => {
    const b = new GraphBuilder();
    const cache = b.input("cache", [1, 2, 8, 4]);
    const x = b.input("x", [1, 2, 1, 4]);
    const g = b.output(b.add("kv-append", "k.cache", { cache, x }, { past: 3, shift: 0, length: "S" })).build();
    expect(exportFailure(() => exportOnnx(g, {})).message).toMatch(
      /^k\.cache: kv-append: the cache must be a weight .*got input cache/,
    );
    const w = new GraphBuilder();
    const state = w.weight("state", [1, 2, 8, 4]);
    const y = w.input("x", [1, 2, 1, 4]);
    const shifted = w
      .output(w.add("kv-append", "k.cache", { cache: state, x: y }, { past: 3, shift: 2, length: "S" }))
      .build();
    expect(exportFailure(() => exportOnnx(shifted, {})).message).toMatch(
      /^k\.cache: kv-append: a fixed shift has no ONNX form.*got 2/,
    );
  });

  it("a kv-append no output reads is not exported (a fixed shift cannot fail it): its cache stays a weight, no past input", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [1, 2, 1, 4]);
    b.add("kv-append", "k.cache", { cache: b.weight("state", [1, 2, 8, 4]), x }, { past: 3, shift: 2, length: "S" });
    const g = b.output(b.add("softmax", "out", { x }, { scale: 1 })).build();
    const onnx = decodeModel(exportOnnx(g, { state: randomTensor([1, 2, 8, 4], 3) }))["graph"] as {
      input: { name: string }[];
      output: { name: string }[];
    };
    expect([onnx.input.map((v) => v.name), onnx.output.map((v) => v.name)]).toEqual([["x"], ["out"]]);
  });

  it("a node no output reads is not exported, so it cannot fail the export", () => {
    const b = new GraphBuilder();
    const y = b.input("y", [2, 3]);
    b.add("softmax-grad", "unused", { y, grad: y }, { scale: 1 });
    const g = b.output(b.add("softmax", "out", { x: y }, { scale: 1 })).build();
    expect(exportOnnx(g, {}).length).toBeGreaterThan(0);
  });

  it("training-mode dropout fails naming the node, as does the fused attention's", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 1, 3, 4]);
    const dropped = b.add("dropout", "weights", { x }, { rate: 0.1, seed: 7, training: true });
    const e = exportFailure(() => exportOnnx(b.output(dropped).build(), {}));
    expect(e.subject).toBe("weights");
    expect(e.message).toMatch(
      /training-mode dropout has no ONNX form.*expected training: false or rate: 0, got training: true, rate: 0.1/,
    );
    const a = new GraphBuilder();
    const q = a.input("q", [1, 1, 3, 4]);
    const fused = a.add("attention", "context", { q, k: q, v: q }, { scale: 0.5, dropoutRate: 0.2, training: true });
    expect(exportFailure(() => exportOnnx(a.output(fused).build(), {})).message).toMatch(
      /^context: attention: training-mode dropout.*dropoutRate: 0.2/,
    );
  });

  it("a missing or misshapen weight fails naming it", () => {
    expect(exportFailure(() => exportOnnx(geluGraph(), {})).message).toMatch(/^table: weight missing/);
    expect(exportFailure(() => exportOnnx(geluGraph(), { table: randomTensor([4, 6], 1) })).message).toMatch(
      /^table: weight shape does not match its declaration, expected \[6, 4\], got \[4, 6\]/,
    );
  });
});
