// Each op's lowering against the cpu executor on graphs the golden cases do not reach: alignments, windows, padding,
// user masks and biases, ALiBi, RoPE, the fused ops, losses and the backward-shaped helpers (pad, sum-to), in both
// contrib modes.
import { describe, expect, it } from "vitest";
import { createOpRegistry, definePointwiseOp, GraphBuilder } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { OnnxExportError } from "./errors.js";
import { exportOnnx } from "./export.js";
import { expectOrtMatchesCpu, randomTensor } from "./test-against-cpu.js";

const modes = ["auto", "none"] as const;

describe.each(modes)("ops in onnxruntime match the cpu executor (contrib %s)", (contrib) => {
  it("mask: bottom-right causal window, padding, a per-batch user mask, a bias and a scale; softmax of fully masked rows", async () => {
    const b = new GraphBuilder();
    const s = b.input("scores", ["B", 2, "L", "S"]);
    const pad = b.input("pad", ["B", "S"]);
    const m = b.input("m", ["B", "L", "S"]);
    const bias = b.input("bias", ["L", "S"]);
    const masked = b.add(
      "mask",
      "masked",
      { scores: s, keyPaddingMask: pad, mask: m, bias },
      { causal: true, window: 2, alignment: "bottom-right", scale: 0.5 },
    );
    const w = b.add("softmax", "weights", { x: masked }, { scale: 1.5 });
    const g = b.output(masked, w).build();
    const padding = Tensor.from([0, 0, 1, 0, 0, 1, 1, 1, 1, 1], [2, 5]); // batch 1: every key padded
    const user = Tensor.from(
      Array.from({ length: 30 }, (_, i) => (i % 7 === 3 ? 0 : 1)),
      [2, 3, 5],
    );
    await expectOrtMatchesCpu(
      g,
      {},
      { scores: randomTensor([2, 2, 3, 5], 1, 3), pad: padding, m: user, bias: randomTensor([3, 5], 2) },
      { contrib },
    );
  });

  it("mask without user terms, top-left, L > S; softmax with a scale of 0", async () => {
    const b = new GraphBuilder();
    const s = b.input("scores", [1, 2, 5, 3]);
    const masked = b.add("mask", "masked", { scores: s }, { causal: true });
    const g = b.output(masked, b.add("softmax", "weights", { x: masked }, { scale: 0 })).build();
    await expectOrtMatchesCpu(g, {}, { scores: randomTensor([1, 2, 5, 3], 3) }, { contrib });
  });

  it("alibi with the paper's slopes for 3 heads, bottom-right, over masked scores", async () => {
    const b = new GraphBuilder();
    const s = b.input("scores", ["B", 3, 4, 6]);
    const masked = b.add("mask", "masked", { scores: s }, { causal: true, alignment: "bottom-right" });
    const g = b
      .output(b.add("alibi", "biased", { scores: masked }, { slopes: null, scale: 0.3, alignment: "bottom-right" }))
      .build();
    await expectOrtMatchesCpu(g, {}, { scores: randomTensor([2, 3, 4, 6], 4, 2) }, { contrib });
  });

  it.each([false, true])("rope over 4 of 6 dims from position 3 (inverse %s)", async (inverse) => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", 2, "T", 6]);
    const g = b
      .output(b.add("rope", "rotated", { x }, { base: 100, rotaryDim: 4, positionOffset: 3, inverse }))
      .build();
    await expectOrtMatchesCpu(g, {}, { x: randomTensor([2, 2, 5, 6], 5) }, { contrib });
  });

  it("the fused attention op: GQA, bottom-right causal window, a fully padded batch", async () => {
    const b = new GraphBuilder();
    const q = b.input("q", ["B", 4, "L", 8]);
    const k = b.input("k", ["B", 2, "S", 8]);
    const v = b.input("v", ["B", 2, "S", 8]);
    const pad = b.input("pad", ["B", "S"]);
    const g = b
      .output(
        b.add(
          "attention",
          "context",
          { q, k, v, keyPaddingMask: pad },
          { causal: true, window: 2, alignment: "bottom-right", scale: 0.4 },
        ),
      )
      .build();
    const inputs = {
      q: randomTensor([2, 4, 3, 8], 6),
      k: randomTensor([2, 2, 5, 8], 7),
      v: randomTensor([2, 2, 5, 8], 8),
      pad: Tensor.from([0, 1, 0, 0, 0, 1, 1, 1, 1, 1], [2, 5]),
    };
    await expectOrtMatchesCpu(g, {}, inputs, { contrib });
  });

  it("score and weighted-sum with one key/value head (MQA)", async () => {
    const b = new GraphBuilder();
    const q = b.input("q", ["B", 3, "L", 4]);
    const k = b.input("k", ["B", 1, "S", 4]);
    const s = b.add("score", "scores", { q, k });
    const g = b.output(s, b.add("weighted-sum", "context", { weights: s, v: k })).build();
    await expectOrtMatchesCpu(
      g,
      {},
      { q: randomTensor([2, 3, 4, 4], 9), k: randomTensor([2, 1, 6, 4], 10) },
      { contrib },
    );
  });

  it.each(["none", "tanh"] as const)("linear-gelu, gelu (%s) with and without a bias", async (approximate) => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 6]);
    const w = b.weight("w", [5, 6]);
    const bias = b.weight("b", [5]);
    const fused = b.add("linear-gelu", "fused", { x, weight: w, bias }, { approximate });
    const bare = b.add("linear-gelu", "bare", { x, weight: w }, { approximate });
    const g = b.output(fused, bare, b.add("gelu", "act", { x }, { approximate })).build();
    const report = await expectOrtMatchesCpu(
      g,
      { w: randomTensor([5, 6], 11), b: randomTensor([5], 12) },
      { x: randomTensor([2, 3, 6], 13, 3) },
      { contrib },
    );
    const contribOps = report.nodes.flatMap((n) => n.onnxOps.filter((o) => o.startsWith("com.microsoft.")));
    const expected =
      approximate === "tanh"
        ? ["com.microsoft.FastGelu", "com.microsoft.FastGelu", "com.microsoft.FastGelu"]
        : ["com.microsoft.BiasGelu", "com.microsoft.Gelu", "com.microsoft.Gelu"];
    expect(contribOps).toEqual(contrib === "auto" ? expected : []);
  });

  it("relu: plain ONNX Relu, also on a projection's output (no fused form; contrib mode changes nothing)", async () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 6]);
    const w = b.weight("w", [5, 6]);
    const act = b.add("relu", "act", { x: b.add("projection", "up", { x, weight: w }) });
    const g = b.output(act, b.add("relu", "bare", { x })).build();
    const report = await expectOrtMatchesCpu(
      g,
      { w: randomTensor([5, 6], 11) },
      { x: randomTensor([2, 3, 6], 13, 3) },
      { contrib },
    );
    const byNode = Object.fromEntries(report.nodes.map((n) => [n.node, n]));
    expect([byNode["act"]!.onnxOps, byNode["bare"]!.onnxOps]).toEqual([["Relu"], ["Relu"]]);
  });

  it("a Llama MLP: rms-norm (with and without weight), silu and a broadcast mul in plain ops", async () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 6]);
    const norm = b.add("rms-norm", "norm", { x, weight: b.weight("nw", [6]) }, { eps: 1e-6 });
    const gate = b.add("silu", "act", { x: b.add("projection", "gate", { x: norm, weight: b.weight("wg", [5, 6]) }) });
    const up = b.add("projection", "up", { x: norm, weight: b.weight("wu", [5, 6]) });
    const prod = b.add("mul", "prod", { a: gate, b: up });
    const scaled = b.add("mul", "scaled", { a: prod, b: b.weight("s", [5]) });
    const g = b.output(scaled, b.add("rms-norm", "plain", { x }, { eps: 1e-2 })).build();
    const weights = {
      nw: randomTensor([6], 21),
      wg: randomTensor([5, 6], 22),
      wu: randomTensor([5, 6], 23),
      s: randomTensor([5], 24),
    };
    const report = await expectOrtMatchesCpu(g, weights, { x: randomTensor([2, 3, 6], 25, 3) }, { contrib });
    const byNode = Object.fromEntries(report.nodes.map((n) => [n.node, n]));
    expect([byNode["act"]!.onnxOps, byNode["prod"]!.onnxOps]).toEqual([["Sigmoid", "Mul"], ["Mul"]]);
    expect(byNode["norm"]!.onnxOps).toEqual(["Mul", "ReduceMean", "Add", "Sqrt", "Reciprocal", "Mul", "Mul"]);
  });

  it("elementwise expressions: a user's definePointwiseOp and a pointwise node of three inputs, as plain ONNX nodes", async () => {
    const el = (name: string) => ({ op: "input", name, index: [] });
    const softplus = definePointwiseOp({
      kind: "softplus",
      doc: "log(1 + exp(x))",
      inputs: [{ name: "x" }],
      expr: { op: "log", args: [{ op: "add", args: [1, { op: "exp", args: [el("x")] }] }] },
    });
    const b = new GraphBuilder({ registry: createOpRegistry([softplus]) });
    const [x, y, z] = ["x", "y", "z"].map((n) => b.input(n, ["B", 4]));
    const soft = b.add("softplus", "soft", { x: x! });
    const expr = {
      op: "where",
      args: [
        { op: "gt", args: [el("x0"), 0] },
        { op: "div", args: [el("x1"), { op: "add", args: [1, { op: "abs", args: [el("x2")] }] }] },
        { op: "mod", args: [el("x2"), 0.75] },
      ],
    };
    const mixed = b.add("pointwise", "mixed", { x0: soft, x1: y!, x2: z! }, { expr });
    const g = b.output(soft, mixed).build();
    const report = await expectOrtMatchesCpu(
      g,
      {},
      { x: randomTensor([3, 4], 31, 3), y: randomTensor([3, 4], 32, 3), z: randomTensor([3, 4], 33, 3) },
      { contrib },
    );
    const byNode = Object.fromEntries(report.nodes.map((n) => [n.node, n]));
    expect(byNode["soft"]!.onnxOps).toEqual(["Exp", "Add", "Log"]);
    expect(byNode["mixed"]!.onnxOps).toContain("Where");
  });

  it("add-layer-norm: SkipLayerNormalization for equal rank-3 shapes, plain for a broadcast and without a weight", async () => {
    const b = new GraphBuilder();
    const a = b.input("a", ["B", "T", 8]);
    const c = b.input("c", ["B", "T", 8]);
    const w = b.weight("w", [8]);
    const beta = b.weight("beta", [8]);
    const skip = b.add("add-layer-norm", "skip", { a, b: c, weight: w, bias: beta }, { eps: 1e-5 });
    const broadcast = b.add("add-layer-norm", "broadcast", { a, b: beta, weight: w }, { eps: 1e-3 });
    const bare = b.add("add-layer-norm", "bare", { a, b: c }, { eps: 1e-5 });
    const g = b.output(skip, broadcast, bare, b.add("layer-norm", "ln", { x: a }, { eps: 1e-5 })).build();
    const report = await expectOrtMatchesCpu(
      g,
      { w: randomTensor([8], 14), beta: randomTensor([8], 15) },
      { a: randomTensor([2, 3, 8], 16, 2), c: randomTensor([2, 3, 8], 17) },
      { contrib },
    );
    const byNode = Object.fromEntries(report.nodes.map((n) => [n.node, n]));
    expect(byNode["skip"]!.onnxOps.includes("com.microsoft.SkipLayerNormalization")).toBe(contrib === "auto");
    expect(byNode["broadcast"]!.contrib).toBe(false);
    if (contrib === "auto") expect(byNode["broadcast"]!.plainBecause).toMatch(/one shape/);
    if (contrib === "auto") expect(byNode["bare"]!.plainBecause).toMatch(/weight/);
  });

  it.each(["mean", "sum", "none"] as const)(
    "embedding and cross-entropy (%s) with an ignored target",
    async (reduction) => {
      const b = new GraphBuilder();
      const ids = b.input("ids", ["B", "T"], "int32");
      const targets = b.input("targets", ["B", "T"], "int32");
      const table = b.weight("table", [7, 5]);
      const logits = b.add("embedding", "logits", { ids, weight: table });
      const g = b
        .output(logits, b.add("cross-entropy", "loss", { logits, targets }, { ignoreIndex: -100, reduction }))
        .build();
      const inputs = {
        ids: Tensor.int32([0, 3, 6, 2, 2, 5], [2, 3]),
        targets: Tensor.int32([1, -100, 4, 0, 3, -100], [2, 3]),
      };
      await expectOrtMatchesCpu(g, { table: randomTensor([7, 5], 18, 4) }, inputs, { contrib });
    },
  );

  it.each([
    [0, "T"],
    [2, "T"],
    [3, 3],
  ] as const)("position-embedding at offset %s with T = %s, broadcast over the batch when added", async (offset, t) => {
    const b = new GraphBuilder();
    const ids = b.input("ids", ["B", t], "int32");
    const tok = b.add("embedding", "tok", { ids, weight: b.weight("wte", [7, 5]) });
    const pos = b.add("position-embedding", "pos", { ids, weight: b.weight("wpe", [6, 5]) }, { offset });
    const g = b.output(pos, b.add("add", "x", { a: tok, b: pos })).build();
    const inputs = { ids: Tensor.int32([0, 3, 6, 2, 2, 5], [2, 3]) };
    const report = await expectOrtMatchesCpu(
      g,
      { wte: randomTensor([7, 5], 20), wpe: randomTensor([6, 5], 21) },
      inputs,
      { contrib },
    );
    expect(report.nodes.find((n) => n.node === "pos")!.onnxOps).toContain("Slice");
  });

  it("cross-entropy mean over no counted position is 0", async () => {
    const b = new GraphBuilder();
    const logits = b.input("logits", [2, 3]);
    const targets = b.input("targets", [2], "int32");
    const g = b
      .output(b.add("cross-entropy", "loss", { logits, targets }, { ignoreIndex: 9, reduction: "mean" }))
      .build();
    await expectOrtMatchesCpu(
      g,
      {},
      { logits: randomTensor([2, 3], 19), targets: Tensor.int32([9, 9], [2]) },
      { contrib },
    );
  });

  it("reshape with symbolic dims, transpose, slice, pad and sum-to", async () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 6]);
    const split = b.add("reshape", "split", { x }, { shape: ["B", "T", 2, 3] });
    const heads = b.add("transpose", "heads", { x: split }, { perm: [0, 2, 1, 3] });
    const part = b.add("slice", "part", { x: heads }, { axis: -1, start: 1, size: 2 });
    const padded = b.add("pad", "padded", { x: part }, { axis: 3, before: 1, after: 2 });
    const summed = b.add("sum-to", "summed", { x: padded }, { shape: [2, 1, 5] });
    const g = b
      .output(heads, padded, summed, b.add("sum-to", "same", { x: part }, { shape: ["B", 2, "T", 2] }))
      .build();
    await expectOrtMatchesCpu(g, {}, { x: randomTensor([3, 4, 6], 20) }, { contrib });
  });

  it("slice from the end of a symbolic axis: the last position, and two entries before the last", async () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 6]);
    const last = b.add("slice", "last", { x }, { axis: 1, start: -1, size: 1 });
    const inner = b.add("slice", "inner", { x }, { axis: -1, start: -3, size: 2 });
    await expectOrtMatchesCpu(b.output(last, inner).build(), {}, { x: randomTensor([2, 5, 6], 22) }, { contrib });
  });

  it("eval-mode and rate-0 dropout are the identity", async () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", 4]);
    const eval_ = b.add("dropout", "eval", { x }, { rate: 0.5, seed: 3, training: false });
    const g = b.output(b.add("dropout", "rate0", { x: eval_ }, { rate: 0, seed: 3, training: true })).build();
    await expectOrtMatchesCpu(g, {}, { x: randomTensor([2, 4], 21) }, { contrib });
  });
});

describe("position-embedding with a named offset", () => {
  it("fails the export naming the node when no graph input carries the offset's dim", () => {
    const b = new GraphBuilder();
    const ids = b.input("ids", ["B", "T"], "int32");
    const g = b
      .output(b.add("position-embedding", "pos", { ids, weight: b.weight("wpe", [6, 5]) }, { offset: "N" }))
      .build();
    let e: unknown;
    try {
      exportOnnx(g, { wpe: randomTensor([6, 5], 1) });
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(OnnxExportError);
    expect((e as OnnxExportError).subject).toBe("pos");
    expect((e as OnnxExportError).message).toContain("symbolic dim N is carried by no graph input");
  });
});
