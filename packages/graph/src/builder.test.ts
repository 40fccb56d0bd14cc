import { describe, expect, it } from "vitest";
import { standardAttention, validationError } from "../test/helpers.js";
import { GraphBuilder, insertAfter } from "./builder.js";
import { defineOp } from "./op-def.js";
import { createOpRegistry } from "./registry.js";

/** A builder with x [B, T, 8] and weight W [8, 8] declared. */
function start(): GraphBuilder {
  const b = new GraphBuilder();
  b.input("x", ["B", "T", 8]);
  b.weight("W", [8, 8]);
  return b;
}

/** A builder holding q, k, v of [B, H, L, D] = ["B", 4, "T", 4] and Hkv = kvHeads, plus scores. */
function attentionInputs(kvHeads = 2): GraphBuilder {
  const b = new GraphBuilder();
  b.input("q", ["B", 4, "T", 4]);
  b.input("k", ["B", kvHeads, "T", 4]);
  b.input("v", ["B", kvHeads, "T", 4]);
  return b;
}

describe("GraphBuilder: the standard attention chain", () => {
  it("infers every shape with symbolic dims", () => {
    const { b, graph } = standardAttention();
    const shapes = Object.fromEntries(graph.nodes.map((n) => [n.name, n.shape]));
    expect(shapes).toEqual({
      queries: ["B", "T", 8],
      "queries.split": ["B", "T", 2, 4],
      "queries.heads": ["B", 2, "T", 4],
      keys: ["B", "T", 8],
      "keys.split": ["B", "T", 2, 4],
      "keys.heads": ["B", 2, "T", 4],
      values: ["B", "T", 8],
      "values.split": ["B", "T", 2, 4],
      "values.heads": ["B", 2, "T", 4],
      scores: ["B", 2, "T", "T"],
      masked: ["B", 2, "T", "T"],
      softmax: ["B", 2, "T", "T"],
      weights: ["B", 2, "T", "T"],
      "context.heads": ["B", 2, "T", 4],
      "context.merge": ["B", "T", 2, 4],
      context: ["B", "T", 8],
      output: ["B", "T", 8],
    });
    expect(b.shapeOf("scores")).toEqual(["B", 2, "T", "T"]);
    expect(graph.shapeOf("x")).toEqual(["B", "T", 8]);
    expect(graph.outputs).toEqual(["output"]);
  });

  it("normalises attributes with their defaults", () => {
    const { graph } = standardAttention();
    expect(graph.node("masked").attrs).toEqual({ causal: true, window: null, alignment: "top-left", scale: 1 });
    expect(graph.node("weights").attrs).toEqual({ rate: 0.1, seed: 7, training: false });
    expect(graph.node("softmax").attrs).toEqual({ scale: 0.5 });
  });

  it("records roles and consumers", () => {
    const { graph } = standardAttention();
    expect(graph.roleOf("x")).toBe("input");
    expect(graph.roleOf("W_query")).toBe("weight");
    expect(graph.roleOf("scores")).toBe("node");
    expect(
      graph
        .consumers("x")
        .map((c) => c.node)
        .sort(),
    ).toEqual(["keys", "queries", "values"]);
    expect(graph.consumers("scores")).toEqual([{ node: "masked", slot: "scores" }]);
    expect(graph.has("nope")).toBe(false);
    expect(() => graph.node("nope")).toThrow(/nope: no such node/);
  });

  it("keeps inferred shapes concrete when the dims are numbers", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 5, 8]);
    const q = b.add("projection", "q", { x, weight: b.weight("W", [6, 8]), bias: b.weight("bias", [6]) });
    expect(b.shapeOf(q)).toEqual([2, 5, 6]);
  });

  it("prefixes node names for stacked blocks", () => {
    const b = new GraphBuilder({ prefix: "blocks.0.attn" });
    const x = b.input("x", ["B", "T", 8]);
    const w = b.weight("W", [8, 8]);
    const q = b.add("projection", "queries", { x, weight: w });
    expect(q).toBe("blocks.0.attn.queries");
    expect(b.output(q).build().node("blocks.0.attn.queries").shape).toEqual(["B", "T", 8]);
  });

  it("takes the same value into two slots (one edge per slot)", () => {
    const b = new GraphBuilder();
    const q = b.input("q", [1, 2, 3, 4]);
    const s = b.add("score", "self", { q, k: q });
    const g = b.output(s).build();
    expect(g.node("self").shape).toEqual([1, 2, 3, 3]);
    expect(g.consumers("q").sort((a, b) => a.slot.localeCompare(b.slot))).toEqual([
      { node: "self", slot: "k" },
      { node: "self", slot: "q" },
    ]);
  });

  it("GraphBuilder.from derives an editable copy", () => {
    const { graph } = standardAttention();
    const b = GraphBuilder.from(graph);
    const extra = b.add("softmax", "extra", { x: "output" });
    const g2 = b.output("output", extra).build();
    expect(g2.nodes.map((n) => n.name)).toEqual([...graph.nodes.map((n) => n.name), "extra"]);
  });

  it("prints one line per node", () => {
    const b = start();
    const q = b.add("projection", "q", { x: "x", weight: "W" });
    expect(b.output(q).build().toString()).toBe(
      "input  x [B, T, 8]\nweight W [8, 8]\nq = projection(x, W) [B, T, 8]\noutputs q",
    );
  });
});

describe("GraphBuilder: each mistake is a GraphValidationError naming the node and field", () => {
  it("projection weight columns that do not match the input's last dim", () => {
    const b = start();
    b.weight("W7", [8, 7]);
    const e = validationError(() => b.add("projection", "queries", { x: "x", weight: "W7" }));
    expect(e.subject).toBe("queries.weight");
    expect(e.expected).toBe("8");
    expect(e.got).toBe("7 in [8, 7]");
    expect(e.message).toBe(
      "queries.weight: weight columns must equal the input's last dim, expected 8, got 7 in [8, 7]",
    );
  });

  // A projection "q" given these inputs (W3 [8, 8, 1] declared too): each field named, of the error it makes.
  it.each([
    {
      what: "a weight of the wrong rank",
      inputs: { x: "x", weight: "W3" },
      fields: { subject: "q.weight", expected: "rank 2", got: "[8, 8, 1] (rank 3)" },
    },
    {
      what: "an unknown input slot",
      inputs: { x: "x", weight: "W", w: "W" },
      fields: { subject: "q.w", expected: "x, weight, bias", got: '"w"' },
    },
    {
      what: "an input that refers to no value",
      inputs: { x: "y", weight: "W" },
      fields: { subject: "q.x", code: "dangling-edge", got: '"y"' },
    },
  ])("$what", ({ inputs, fields }) => {
    const b = start();
    b.weight("W3", [8, 8, 1]);
    const e = validationError(() => b.add("projection", "q", inputs));
    for (const [field, value] of Object.entries(fields)) expect(e[field as keyof typeof fields]).toBe(value);
  });

  it("a bias that does not match the weight's rows", () => {
    const b = start();
    b.weight("b", [7]);
    const e = validationError(() => b.add("projection", "q", { x: "x", weight: "W", bias: "b" }));
    expect(e.subject).toBe("q.bias");
    expect([e.expected, e.got]).toEqual(["8", "7 in [7]"]);
  });

  it("a missing required input", () => {
    const b = start();
    const e = validationError(() => b.add("projection", "q", { x: "x" }));
    expect(e.subject).toBe("q.weight");
    expect(e.message).toContain("missing input of op projection");
    // an optional input may be left out, or given as undefined
    expect(() => b.add("projection", "q", { x: "x", weight: "W", bias: undefined })).not.toThrow();
  });

  it('an input slot "__proto__" is an unknown slot, not silently dropped', () => {
    const b = start();
    const e = validationError(() => b.add("projection", "q", { x: "x", weight: "W", ["__proto__"]: "W" }));
    expect(e.subject).toBe("q.__proto__");
    expect(e.message).toContain("unknown input for op projection");
  });

  it("an unknown op kind (code unknown-op)", () => {
    const b = start();
    const e = validationError(() => b.add("flash-attention", "fa", { x: "x" }));
    expect(e.code).toBe("unknown-op");
    expect(e.subject).toBe("fa");
    expect(e.message).toContain('unknown op kind "flash-attention"');
    expect(e.expected).toContain("projection");
  });

  it("an unknown attribute, also one named like an Object.prototype member", () => {
    const b = start();
    const e = validationError(() => b.add("softmax", "s", { x: "x" }, { scal: 0.5 }));
    expect(e.subject).toBe("s.scal");
    expect(e.expected).toBe("scale");
    expect(validationError(() => b.add("softmax", "s", { x: "x" }, { toString: 1 })).subject).toBe("s.toString");
    expect(validationError(() => b.add("softmax", "s", { x: "x" }, { constructor: 1 })).subject).toBe("s.constructor");
  });

  it("an attribute of the wrong type", () => {
    const b = start();
    const e = validationError(() => b.add("softmax", "s", { x: "x" }, { scale: "0.5" }));
    expect(e.subject).toBe("s.scale");
    expect([e.expected, e.got]).toEqual(["a finite number", '"0.5"']);
    expect(validationError(() => b.add("softmax", "s", { x: "x" }, { scale: Number.NaN })).got).toBe("NaN");
    expect(validationError(() => b.add("dropout", "d", { x: "x" }, { seed: 1.5 })).subject).toBe("d.seed");
    expect(validationError(() => b.add("dropout", "d", { x: "x" }, { training: 1 })).expected).toBe("true or false");
  });

  it("a sliding window without causal on mask", () => {
    const b = attentionInputs();
    const s = b.add("score", "scores", { q: "q", k: "k" });
    const e = validationError(() => b.add("mask", "mask", { scores: s }, { window: 3 }));
    expect(e.subject).toBe("mask.window");
    expect([e.expected, e.got]).toEqual(["causal: true", "causal: false"]);
    expect(() => b.add("mask", "mask", { scores: s }, { window: 3, causal: true })).not.toThrow();
    expect(validationError(() => b.add("mask", "m0", { scores: s }, { window: 0, causal: true })).expected).toBe(
      ">= 1",
    );
    expect(validationError(() => b.add("mask", "m1", { scores: s }, { alignment: "center" })).subject).toBe(
      "m1.alignment",
    );
  });

  it("a key padding mask that does not fit the scores", () => {
    const b = attentionInputs();
    b.input("pad", [3, "T"]);
    b.input("pad5", ["B", 5]);
    const s = b.add("score", "scores", { q: "q", k: "k" });
    expect(() => b.add("mask", "m", { scores: s, keyPaddingMask: "pad" })).not.toThrow(); // B unbound: checked at run time
    b.input("q2", [2, 4, 6, 4]);
    b.input("k2", [2, 2, 6, 4]);
    const s2 = b.add("score", "s2", { q: "q2", k: "k2" });
    const e = validationError(() => b.add("mask", "m2", { scores: s2, keyPaddingMask: "pad5" }));
    expect(e.subject).toBe("m2.keyPaddingMask");
    expect([e.expected, e.got]).toEqual(["6", "5 in [B, 5]"]);
  });

  it("dropout rate 1", () => {
    const b = start();
    const e = validationError(() => b.add("dropout", "d", { x: "x" }, { rate: 1 }));
    expect(e.subject).toBe("d.rate");
    expect(e.message).toBe("d.rate: dropout rate must be below 1, expected 0 <= rate < 1, got 1");
    expect(validationError(() => b.add("dropout", "d", { x: "x" }, { rate: -0.1 })).expected).toBe(">= 0");
  });

  it("a transpose perm that is not a permutation", () => {
    const b = start();
    for (const perm of [
      [0, 1],
      [0, 1, 1],
      [0, 1, 3],
      [0, -1, 1],
    ]) {
      const e = validationError(() => b.add("transpose", "t", { x: "x" }, { perm }));
      expect(e.subject).toBe("t.perm");
      expect(e.expected).toBe("a permutation of 0..2");
      expect(e.got).toBe(`[${perm.join(", ")}]`);
    }
    expect(validationError(() => b.add("transpose", "t", { x: "x" }, { perm: [0, 1.5, 2] })).expected).toBe(
      "an array of integers",
    );
  });

  it("a reshape that changes the element count", () => {
    const b = start();
    const e = validationError(() => b.add("reshape", "r", { x: "x" }, { shape: ["B", "T", 3, 4] }));
    expect(e.subject).toBe("r.shape");
    expect(e.got).toBe("[B, T, 3, 4]");
    expect(e.expected).toContain("[B, T, 8]");
    expect(validationError(() => b.add("reshape", "r", { x: "x" }, { shape: ["B", "T", 16] })).subject).toBe("r.shape");
    // different symbols could still be equal once bound (T may be 1), so this waits for the run
    expect(b.shapeOf(b.add("reshape", "later", { x: "x" }, { shape: ["B", 8] }))).toEqual(["B", 8]);
    expect(validationError(() => b.add("reshape", "r", { x: "x" }, { shape: ["B", "T", -1] })).subject).toBe("r.shape");
    expect(validationError(() => b.add("reshape", "r", { x: "x" }, { shape: ["B", "", 8] })).subject).toBe("r.shape");
    // the same count in another spelling is fine
    expect(b.shapeOf(b.add("reshape", "ok", { x: "x" }, { shape: ["T", "B", 2, 2, 2] }))).toEqual(["T", "B", 2, 2, 2]);
  });

  it("score with H not a multiple of Hkv", () => {
    const b = attentionInputs(3);
    const e = validationError(() => b.add("score", "scores", { q: "q", k: "k" }));
    expect(e.subject).toBe("scores.k");
    expect([e.expected, e.got]).toEqual(["a divisor of H=4", "Hkv=3"]);
    const w = attentionInputs(3);
    w.input("w", ["B", 4, "T", "T"]);
    expect(validationError(() => w.add("weighted-sum", "ctx", { weights: "w", v: "v" })).subject).toBe("ctx.v");
  });

  it("grouped-query and multi-query heads are fine", () => {
    for (const hkv of [1, 2, 4]) {
      const b = attentionInputs(hkv);
      const s = b.add("score", "scores", { q: "q", k: "k" });
      expect(b.shapeOf(s)).toEqual(["B", 4, "T", "T"]);
      expect(b.shapeOf(b.add("weighted-sum", "ctx", { weights: s, v: "v" }))).toEqual(["B", 4, "T", 4]);
    }
  });

  it("score and weighted-sum check batch, head dim and key length", () => {
    const b = new GraphBuilder();
    b.input("q", [2, 4, 5, 8]);
    b.input("kb", [3, 4, 5, 8]);
    b.input("kd", [2, 4, 5, 6]);
    expect(validationError(() => b.add("score", "s", { q: "q", k: "kb" })).message).toContain(
      "batch of keys must match queries",
    );
    expect(validationError(() => b.add("score", "s", { q: "q", k: "kd" })).message).toContain(
      "head dim of keys must match queries",
    );
    b.input("w", [2, 4, 5, 7]);
    b.input("v", [2, 4, 6, 8]);
    const e = validationError(() => b.add("weighted-sum", "c", { weights: "w", v: "v" }));
    expect([e.subject, e.expected, e.got]).toEqual(["c.v", "7", "6 in [2, 4, 6, 8]"]);
  });

  it("different dim names are not proven different at build time", () => {
    // Cross-attention: queries over L, keys over S. Names only fail when both sides are known numbers.
    const b = new GraphBuilder();
    b.input("q", ["B", 2, "L", 4]);
    b.input("k", ["N", 2, "S", 4]);
    expect(b.shapeOf(b.add("score", "s", { q: "q", k: "k" }))).toEqual(["B", 2, "L", "S"]);
  });

  it("duplicate names (code duplicate-name)", () => {
    const b = start();
    b.add("softmax", "s", { x: "x" });
    const e = validationError(() => b.add("softmax", "s", { x: "x" }));
    expect(e.code).toBe("duplicate-name");
    expect(e.subject).toBe("s");
    expect(validationError(() => b.input("x", [1])).code).toBe("duplicate-name");
    expect(validationError(() => b.weight("s", [1])).code).toBe("duplicate-name");
    expect(validationError(() => b.add("softmax", "W", { x: "x" })).code).toBe("duplicate-name");
  });

  it("an invalid declared shape", () => {
    const b = new GraphBuilder();
    expect(validationError(() => b.input("x", ["B", -1])).subject).toBe("x");
    expect(validationError(() => b.weight("w", [1.5])).subject).toBe("w");
    expect(validationError(() => b.input("y", ["B", ""])).subject).toBe("y");
  });

  it("an output that is not a node, or no output", () => {
    const b = start();
    b.add("softmax", "s", { x: "x" });
    const e = validationError(() => b.output("x").build());
    expect(e.subject).toBe("graph.outputs");
    expect(e.message).toContain("output is not a node");
    expect(e.got).toBe('"x"');
    expect(validationError(() => start().build()).message).toContain("at least one output");
    expect(validationError(() => start().output("nothing").build()).got).toBe('"nothing"');
  });

  it("shapeOf an unknown value", () => {
    expect(validationError(() => start().shapeOf("zz")).subject).toBe("zz");
  });
});

describe("insertAfter", () => {
  const softcap = defineOp<{ cap: number }>({
    kind: "softcap",
    doc: "cap · tanh(x / cap)",
    inputs: [{ name: "x" }],
    attrs: { cap: { type: "number", min: 0 } },
    inferShape: ([x]) => x!,
  });

  it("places a user node between two nodes and rewires consumers", () => {
    const { graph } = standardAttention(new GraphBuilder({ registry: createOpRegistry([softcap]) }));
    const g = insertAfter(graph, "scores", (b, v) => b.add("softcap", "scores.capped", { x: v }, { cap: 30 }));
    expect(g.node("scores.capped").inputs).toEqual({ x: "scores" });
    expect(g.node("scores.capped").shape).toEqual(["B", 2, "T", "T"]);
    expect(g.node("masked").inputs).toEqual({ scores: "scores.capped" });
    expect(g.consumers("scores")).toEqual([{ node: "scores.capped", slot: "x" }]);
    const names = g.nodes.map((n) => n.name);
    expect(names.indexOf("scores.capped")).toBe(names.indexOf("scores") + 1);
    expect(names.length).toBe(graph.nodes.length + 1);
    // the original graph is untouched
    expect(graph.has("scores.capped")).toBe(false);
    expect(graph.node("masked").inputs).toEqual({ scores: "scores" });
  });

  it("rewires the graph outputs", () => {
    const { graph } = standardAttention();
    const g = insertAfter(graph, "output", (b, v) => b.add("softmax", "output.soft", { x: v }));
    expect(g.outputs).toEqual(["output.soft"]);
    expect(g.node("output.soft").inputs).toEqual({ x: "output" });
  });

  it("rewires every consumer and slot, and may insert a chain", () => {
    const b = new GraphBuilder();
    const q = b.input("q", [1, 2, 3, 4]);
    const x = b.add("transpose", "x", { x: q }, { perm: [0, 1, 2, 3] });
    const s = b.add("score", "s", { q: x, k: x });
    const g = insertAfter(b.output(s, x).build(), "x", (bb, v) =>
      bb.add("dropout", "d2", { x: bb.add("dropout", "d1", { x: v }) }),
    );
    expect(g.node("s").inputs).toEqual({ q: "d2", k: "d2" });
    expect(g.outputs).toEqual(["s", "d2"]);
    expect(g.nodes.map((n) => n.name)).toEqual(["x", "d1", "d2", "s"]);
  });

  it("names a target that is not a node", () => {
    const { graph } = standardAttention();
    expect(validationError(() => insertAfter(graph, "x", (_b, v) => v)).subject).toBe("x");
    expect(validationError(() => insertAfter(graph, "nope", (_b, v) => v)).subject).toBe("nope");
  });
});
