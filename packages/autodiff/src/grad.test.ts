// grad() on whole graphs (every attention variant, a transformer block, the worked example's model with its loss)
// against central differences in float64, and what it builds: names, outputs, summed contributions, and its errors.
import { buildAttention, type AttentionConfigInput, type AttentionOptions } from "@attngraph/attention";
import { GraphBuilder, GraphValidationError, createOpRegistry, type OpGraph } from "@attngraph/graph";
import { simpleTransformer, transformerBlock } from "@attngraph/nn";
import { elementwiseUserOp, softcapOp } from "@attngraph/testkit";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { describe, expect, it } from "vitest";
import { grad } from "./grad.js";
import { eval64 } from "./test-eval64.js";
import { expectGradientsMatch, randomIds, randomValue, rngOf, type Rng } from "./test-gradcheck.js";
import type { Value64 } from "./test-eval64.js";

/** Random values for every input and weight of a graph, binding B, T, S as given; int32 inputs are ids below `ids`. */
function valuesFor(graph: OpGraph, dims: Record<string, number>, rng: Rng, ids = 4): Record<string, Value64> {
  const out: Record<string, Value64> = {};
  for (const d of [...graph.inputs, ...graph.weights]) {
    const shape = d.shape.map((x) => (typeof x === "string" ? dims[x]! : x));
    out[d.name] = d.dtype === "int32" ? randomIds(rng, shape, ids) : randomValue(rng, shape, 0.8);
  }
  return out;
}

const ATTENTION: readonly [string, AttentionConfigInput, AttentionOptions][] = [
  ["plain, with biases", { dIn: 6, dOut: 6, numHeads: 2, qkvBias: true, outProj: true, outBias: true }, {}],
  ["causal GQA", { dIn: 8, dOut: 8, numHeads: 4, numKvHeads: 2, causal: true, outProj: true }, {}],
  ["sliding window", { dIn: 4, dOut: 4, numHeads: 2, causal: true, window: 2 }, {}],
  ["cross-attention", { dIn: 4, dOut: 4, numHeads: 2, cross: true, outProj: true, outBias: true }, {}],
  ["key padding", { dIn: 4, dOut: 4, numHeads: 1 }, { keyPaddingMask: true }],
  ["fused QKV", { dIn: 6, dOut: 6, numHeads: 3, qkvBias: true, outProj: true }, { fusedQkv: true }],
  ["RoPE", { dIn: 8, dOut: 8, numHeads: 2, causal: true }, { position: { kind: "rope", rotaryDim: 2 } }],
  ["ALiBi", { dIn: 4, dOut: 4, numHeads: 2, causal: true }, { position: { kind: "alibi" } }],
  ["additive bias", { dIn: 4, dOut: 4, numHeads: 2, scale: 0.3 }, { userMask: "bias" }],
  ["dropout in training", { dIn: 4, dOut: 4, numHeads: 2, dropout: 0.25 }, { training: true, seed: 9 }],
];

describe("grad() on whole graphs, against central differences (float64)", () => {
  for (const [label, config, options] of ATTENTION) {
    it(`attention: ${label}`, () => {
      const graph = buildAttention(config, options);
      const rng = rngOf(label.length);
      const values = valuesFor(graph, { B: 2, T: 3, S: 4 }, rng);
      if (values["keyPaddingMask"])
        values["keyPaddingMask"] = { shape: [2, 3], data: Float64Array.from([0, 0, 1, 0, 1, 1]) };
      const wrt = [
        ...graph.inputs.filter((i) => i.name === "x" || i.name === "kv" || i.name === "bias").map((i) => i.name),
        ...graph.weights.map((w) => w.name),
      ];
      expectGradientsMatch({ graph, loss: graph.outputs[0]!, wrt, values, samples: 12 }, rng);
    });
  }

  it("a fully masked query row gets zero gradient, never NaN", () => {
    const graph = buildAttention({ dIn: 4, dOut: 4, numHeads: 1, outProj: true }, { keyPaddingMask: true });
    const values = valuesFor(graph, { B: 1, T: 3 }, rngOf(5));
    values["keyPaddingMask"] = { shape: [1, 3], data: Float64Array.from([1, 1, 1]) }; // every key hidden
    const g = grad(graph, { loss: "output", wrt: ["x", "W_query", "W_key", "W_value"] });
    const all = eval64(g.graph, { ...values, [g.seed!]: randomValue(rngOf(6), [1, 3, 4]) });
    for (const w of ["x", "W_query", "W_key", "W_value"])
      expect(
        [...all.get(`${w}.grad`)!.data].every((v) => v === 0),
        w,
      ).toBe(true);
  });

  it("a transformer block (pre-norm, GELU MLP, residuals, a user mask)", () => {
    const graph = transformerBlock({ embedDim: 8, nHeads: 2, mlpRatio: 2 }, { mask: true });
    const rng = rngOf(12);
    const values = valuesFor(graph, { B: 2, T: 3 }, rng);
    values["mask"] = { shape: [3, 3], data: Float64Array.from([1, 0, 0, 1, 1, 0, 1, 1, 1]) };
    expectGradientsMatch(
      { graph, loss: "output", wrt: ["x", ...graph.weights.map((w) => w.name)], values, samples: 10 },
      rng,
    );
  });

  it("the worked example's model: mean cross-entropy, a scalar loss, through embeddings and pos_embed", () => {
    const graph = simpleTransformer(
      { vocabSize: 5, embedDim: 8, nHeads: 2, seqLen: 4, mlpRatio: 2, blocks: 2 },
      { loss: true },
    );
    const rng = rngOf(13);
    const values = valuesFor(graph, { B: 2 }, rng, 5);
    const g = grad(graph, { loss: "loss", wrt: graph.weights.map((w) => w.name) });
    expect(g.seed).toBeUndefined();
    expectGradientsMatch({ graph, loss: "loss", wrt: graph.weights.map((w) => w.name), values, samples: 8 }, rng);
  });
});

describe("learned positions (position-embedding), GPT-2's wte + wpe", () => {
  /** ids [B, T] → wte[ids] + wpe[offset..offset+T-1] (broadcast over B) → logits by a head [V, E] → mean cross-entropy. */
  function gpt2Embeddings(offset: number | string) {
    const b = new GraphBuilder();
    const ids = b.input("ids", ["B", "T"], "int32");
    const targets = b.input("targets", ["B", "T"], "int32");
    const wte = b.weight("wte", [5, 4]);
    const wpe = b.weight("wpe", [6, 4]);
    const head = b.weight("head", [5, 4]);
    const x = b.add("add", "x", {
      a: b.add("embedding", "tok", { ids, weight: wte }),
      b: b.add("position-embedding", "pos", { ids, weight: wpe }, { offset }),
    });
    const logits = b.add("projection", "logits", { x, weight: head });
    return b.output(b.add("cross-entropy", "loss", { logits, targets })).build();
  }

  it("matches central differences through the broadcast add, for wte, wpe and the head", () => {
    const graph = gpt2Embeddings(2);
    const rng = rngOf(21);
    const values = valuesFor(graph, { B: 2, T: 3 }, rng, 5);
    expectGradientsMatch({ graph, loss: "loss", wrt: ["wte", "wpe", "head"], values, samples: 12 }, rng);
  });

  it("the table's gradient is the positions' gradient summed over the batch, in rows offset..offset+T-1, 0 elsewhere", () => {
    const graph = gpt2Embeddings(2);
    const g = grad(graph, { loss: "loss", wrt: ["wpe", "x"] });
    expect(g.graph.node("wpe.grad").kind).toBe("position-embedding-grad");
    expect(g.graph.node("wpe.grad").attrs).toEqual({ rows: 6, offset: 2 });
    const all = eval64(g.graph, valuesFor(graph, { B: 2, T: 3 }, rngOf(22), 5));
    const dx = all.get("x.grad")!; // [B, T, E]
    const dw = all.get("wpe.grad")!; // [P, E]
    expect(dw.shape).toEqual([6, 4]);
    for (let p = 0; p < 6; p++) {
      for (let e = 0; e < 4; e++) {
        const t = p - 2;
        const want = t < 0 || t >= 3 ? 0 : dx.data[t * 4 + e]! + dx.data[(3 + t) * 4 + e]!;
        expect(dw.data[p * 4 + e], `row ${p}, column ${e}`).toBeCloseTo(want, 12);
      }
    }
  });

  it("a named offset passes to the gradient op unchanged (bound per run there too)", () => {
    const g = grad(gpt2Embeddings("N"), { loss: "loss", wrt: ["wpe"] });
    expect(g.graph.node("wpe.grad").attrs).toEqual({ rows: 6, offset: "N" });
    expect(g.graph.shapeOf("wpe.grad")).toEqual([6, 4]);
  });
});

describe("what grad() builds", () => {
  const graph = buildAttention({ dIn: 4, dOut: 4, numHeads: 2, outProj: true, outBias: true });

  it("names each gradient <value>.grad, adds them as outputs after the graph's own, and a seed input for a non-scalar loss", () => {
    const g = grad(graph, { loss: "output", wrt: ["W_query", "x"] });
    expect(g.grads).toEqual({ W_query: "W_query.grad", x: "x.grad" });
    expect(g.graph.outputs).toEqual(["output", "W_query.grad", "x.grad"]);
    expect(g.seed).toBe("output.grad");
    expect(g.graph.inputs.map((i) => i.name)).toEqual(["x", "output.grad"]);
    // Intermediate gradients are nodes too, tappable by name; the forward nodes are all still there.
    for (const n of ["weights.grad", "scores.grad", "queries.grad", "context.grad"])
      expect(g.graph.has(n), n).toBe(true);
    for (const n of graph.nodes) expect(g.graph.node(n.name).kind).toBe(n.kind);
  });

  it("sums the gradients of a value read by several nodes: x feeds queries, keys and values", () => {
    const g = grad(graph, { loss: "output", wrt: ["x"] });
    const sum = g.graph.node("x.grad");
    expect(sum.kind).toBe("add");
    const parts = g.graph.nodes.filter((n) => n.name.startsWith("x.grad."));
    expect(parts.map((n) => n.name).sort()).toEqual([
      "x.grad.keys.0",
      "x.grad.queries.0",
      "x.grad.sum1",
      "x.grad.values.0",
    ]);
  });

  it("a wrt that does not reach the loss gets a zero gradient and a note", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 3]);
    const y = b.input("unused", [4]);
    const out = b.add("gelu", "out", { x });
    const other = b.add("gelu", "other", { x: y });
    const g = grad(b.output(out, other).build(), { loss: "out", wrt: ["x", "unused"] });
    expect(g.notes).toEqual(["unused does not reach out: its gradient unused.grad is 0"]);
    const all = eval64(g.graph, {
      x: randomValue(rngOf(1), [2, 3]),
      unused: randomValue(rngOf(2), [4]),
      "out.grad": randomValue(rngOf(3), [2, 3]),
    });
    expect([...all.get("unused.grad")!.data].every((v) => v === 0)).toBe(true); // ±0: 0 · x keeps x's sign
  });

  it("relu's derived rule is one pointwise node: a select of the output's gradient on x (threshold_backward's)", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 3]);
    const g = grad(b.output(b.add("relu", "out", { x })).build(), { loss: "out", wrt: ["x"] });
    const dx = g.graph.node("x.grad");
    expect([dx.kind, dx.inputs["x0"], dx.inputs["x1"]]).toEqual(["pointwise", "out.grad", "x"]);
    const el = (name: string) => ({ op: "input", name, index: [] });
    expect(dx.attrs["expr"]).toEqual({ op: "where", args: [{ op: "le", args: [el("x1"), 0] }, 0, el("x0")] });
  });

  it("mul's rule multiplies the gradient by the other side and sums a broadcast side back (sum-to)", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 3]);
    const s = b.input("s", [3]);
    const g = grad(b.output(b.add("mul", "out", { a: x, b: s })).build(), { loss: "out", wrt: ["x", "s"] });
    const dx = g.graph.node("x.grad");
    expect([dx.kind, dx.inputs["a"], dx.inputs["b"]]).toEqual(["mul", "out.grad", "s"]);
    expect(g.graph.node("s.grad").kind).toBe("sum-to");
  });

  it("rms-norm's rule adds rms-norm-grad and rms-norm-weight-grad, reading x (statistics recomputed)", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 4]);
    const w = b.input("w", [4]);
    const g = grad(b.output(b.add("rms-norm", "out", { x, weight: w }, { eps: 1e-5 })).build(), {
      loss: "out",
      wrt: ["x", "w"],
    });
    expect([g.graph.node("x.grad").kind, g.graph.node("x.grad").attrs["eps"]]).toEqual(["rms-norm-grad", 1e-5]);
    expect(g.graph.node("w.grad").kind).toBe("rms-norm-weight-grad");
  });

  it("fails with typed errors naming the field: unknown loss or wrt, an int32 wrt, an empty or repeated wrt", () => {
    expect(thrownError(() => grad(graph, { loss: "nope", wrt: ["x"] })).subject).toBe("grad.loss");
    expect(thrownError(() => grad(graph, { loss: "x", wrt: ["x"] })).subject).toBe("grad.loss");
    expect(thrownError(() => grad(graph, { loss: "output", wrt: ["nope"] })).subject).toBe("grad.wrt");
    expect(thrownError(() => grad(graph, { loss: "output", wrt: [] })).subject).toBe("grad.wrt");
    expect(thrownError(() => grad(graph, { loss: "output", wrt: ["x", "x"] })).subject).toBe("grad.wrt");
    const lm = simpleTransformer({ vocabSize: 5, embedDim: 4, nHeads: 1, seqLen: 2 }, { loss: true });
    const e = thrownError(() => grad(lm, { loss: "loss", wrt: ["tokens"] }));
    expect(e).toBeInstanceOf(GraphValidationError);
    expect([e.subject, e.message]).toEqual(["grad.wrt.tokens", expect.stringContaining("int32")]);
  });

  it("a graph or options that are none are typed errors naming the argument, not TypeErrors", () => {
    const probes: [() => unknown, string, RegExp][] = [
      [
        () => grad(graph, null as never),
        "grad options",
        /^grad options: missing options, expected \{ loss: a node name, wrt: \[names\] \}, got null$/,
      ],
      [() => grad(graph, undefined as never), "grad options", /got undefined$/],
      [() => grad(graph, ["output"] as never), "grad options", /got an array$/],
      [
        () => grad(null as never, { loss: "output", wrt: ["x"] }),
        "grad graph",
        /^grad graph: not an op graph, expected an OpGraph, got null$/,
      ],
      [() => grad({} as never, { loss: "output", wrt: ["x"] }), "grad graph", /got object$/],
      [
        () => grad(graph, {} as never),
        "grad.loss",
        /the loss must be a node of the graph, expected a node name, got undefined$/,
      ],
    ];
    for (const [f, subject, message] of probes) {
      const e = thrownError(f);
      expect(e).toBeInstanceOf(GraphValidationError);
      expect([e.subject, e.message]).toEqual([subject, expect.stringMatching(message)]);
    }
  });

  it("an op without a backward rule is `unsupported: gradient of op X` naming the node; a rule's bad shape is named too", () => {
    const b = new GraphBuilder({ registry: createOpRegistry([softcapOp(30)]) });
    const x = b.input("x", [2, 3]);
    const out = b.add("gelu", "out", { x: b.add("softcap", "capped", { x }) });
    const e = thrownError(() => grad(b.output(out).build(), { loss: "out", wrt: ["x"] }));
    expect(e.code).toBe("unsupported");
    expect(e.message).toBe("unsupported: gradient of op softcap (node capped): the op declares no backward rule");
    expect(e.subject).toBe("capped");

    const bad = elementwiseUserOp("bad-rule", "a rule that returns the wrong shape", {
      vjp: (ctx) => [ctx.add("sum-to", "s", { x: ctx.grad }, { shape: [1] })],
    });
    const b2 = new GraphBuilder({ registry: createOpRegistry([bad]) });
    const y = b2.add("bad-rule", "y", { x: b2.input("x", [2, 3]) });
    expect(() => grad(b2.output(y).build(), { loss: "y", wrt: ["x"] })).toThrow(
      /y\.vjp: the backward rule of op bad-rule gave input x a gradient of another shape/,
    );
  });

  it("a user op with its own rule is differentiated like a built-in one", () => {
    // The rule is gelu's, for the sake of a rule made of built-in ops.
    const softcap = softcapOp(30, (ctx) => [ctx.addGrad(0, "gelu-grad", { grad: ctx.grad, x: ctx.inputs[0] })]);
    const b = new GraphBuilder({ registry: createOpRegistry([softcap]) });
    const x = b.input("x", [3, 2]);
    const y = b.add("softcap", "y", { x });
    const g = grad(b.output(y).build(), { loss: "y", wrt: ["x"] });
    expect(g.graph.node("x.grad").kind).toBe("gelu-grad");
  });
});

describe("wrt an intermediate node", () => {
  it("a node in wrt gets its gradient once, also when it is read twice or passed straight through an add", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 3]);
    const z = b.input("z", [2, 3]);
    const h = b.add("gelu", "h", { x });
    const y = b.add("add", "y", { a: h, b: h });
    const w = b.add("add", "w", { a: y, b: z });
    const graph = b.output(w).build();
    const g = grad(graph, { loss: "w", wrt: ["h", "y", "x"] });
    expect(g.grads).toEqual({ h: "h.grad", y: "y.grad", x: "x.grad" });
    const rng = rngOf(4);
    expectGradientsMatch({
      graph,
      loss: "w",
      wrt: ["x", "z"],
      values: { x: randomValue(rng, [2, 3]), z: randomValue(rng, [2, 3]) },
    });
    const all = eval64(g.graph, {
      x: randomValue(rng, [2, 3]),
      z: randomValue(rng, [2, 3]),
      "w.grad": { shape: [2, 3], data: Float64Array.from([1, 2, 3, 4, 5, 6]) },
    });
    expect([...all.get("h.grad")!.data]).toEqual([2, 4, 6, 8, 10, 12]); // h is read twice by y = h + h
  });

  it("the loss itself in wrt is a typed error; a wrt node whose inputs need nothing runs no rule", () => {
    const b = new GraphBuilder();
    const ids = b.input("ids", [3], "int32");
    const table = b.input("table", ["V", 4]); // a symbolic row count: embedding's rule could not make a table gradient
    const e = b.add("embedding", "e", { ids, weight: table });
    const out = b.add("gelu", "out", { x: e });
    const graph = b.output(out).build();
    expect(() => grad(graph, { loss: "out", wrt: ["out"] })).toThrow(/grad\.wrt: the loss itself is no variable/);
    expect(grad(graph, { loss: "out", wrt: ["e"] }).grads).toEqual({ e: "e.grad" });
  });
});
