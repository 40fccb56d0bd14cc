import { describe, expect, it } from "vitest";
import { formatError, jsonDoc, standardAttention, validationError } from "../test/helpers.js";
import { GraphBuilder } from "./builder.js";
import { fromJSON, GRAPH_FORMAT, toJSON } from "./json.js";
import { defineOp } from "./op-def.js";
import { createOpRegistry } from "./registry.js";

describe("toJSON / fromJSON", () => {
  it("round-trips the standard attention graph exactly", () => {
    const { graph } = standardAttention();
    const once = JSON.stringify(toJSON(graph));
    expect(JSON.stringify(toJSON(fromJSON(toJSON(graph))))).toBe(once);
    expect(JSON.stringify(toJSON(fromJSON(once)))).toBe(once);
    const back = fromJSON(once);
    expect(back.nodes.map((n) => [n.name, n.shape])).toEqual(graph.nodes.map((n) => [n.name, n.shape]));
  });

  it("writes a fixed field order, the format and the version", () => {
    const j = toJSON(fromJSON(jsonDoc()));
    expect(Object.keys(j)).toEqual(["format", "version", "inputs", "weights", "nodes", "outputs"]);
    expect(j.format).toBe(GRAPH_FORMAT);
    expect(j.version).toBe(1); // the lowest version that expresses it; GRAPH_FORMAT_VERSION (2) once an input is int32
    expect(Object.keys(j.nodes[0]!)).toEqual(["name", "kind", "inputs", "attrs"]);
    expect(j.nodes[0]!.attrs).toEqual({});
    expect(j.nodes[1]!.attrs).toEqual({ scale: 0.5 });
  });

  it("writes normalised attributes, defaults and nulls included, so a reader needs no defaults", () => {
    const b = new GraphBuilder();
    b.input("s", ["B", 2, "T", "T"]);
    const m = b.add("mask", "m", { scores: "s" });
    expect(toJSON(b.output(m).build()).nodes[0]!.attrs).toEqual({
      causal: false,
      window: null,
      alignment: "top-left",
      scale: 1,
    });
  });

  it("an int32 input is written with its dtype in version 2; a float32-only graph stays version 1", () => {
    const b = new GraphBuilder();
    const ids = b.input("tokens", ["B", "T"], "int32");
    const table = b.weight("embed.weight", [10, 4]);
    const g = b.output(b.add("embedding", "embed", { ids, weight: table })).build();
    const j = toJSON(g);
    expect(j.version).toBe(2);
    expect(j.inputs).toEqual([{ name: "tokens", shape: ["B", "T"], dtype: "int32" }]);
    expect(j.weights).toEqual([{ name: "embed.weight", shape: [10, 4] }]);
    expect(JSON.stringify(toJSON(fromJSON(JSON.stringify(j))))).toBe(JSON.stringify(j));
    expect(fromJSON(j).dtypeOf("tokens")).toBe("int32");
    expect(toJSON(fromJSON(jsonDoc())).version).toBe(1);
  });

  it("dtype is a version 2 field: unknown in version 1, and only float32 or int32", () => {
    const v1 = jsonDoc();
    (v1.inputs as Record<string, unknown>[])[0]!.dtype = "int32";
    expect(formatError(() => fromJSON(v1)).subject).toBe("$.inputs[0].dtype");
    const v2 = { ...jsonDoc(), version: 2 };
    (v2.inputs as Record<string, unknown>[])[0]!.dtype = "int8";
    const e = formatError(() => fromJSON(v2));
    expect(e.subject).toBe("$.inputs[0].dtype");
    expect(e.expected).toBe("float32 or int32");
  });

  it("round-trips a user op with the registry that declares it", () => {
    const softcap = defineOp<{ cap: number }>({
      kind: "softcap",
      doc: "cap · tanh(x / cap)",
      inputs: [{ name: "x" }],
      attrs: { cap: { type: "number" } },
      inferShape: ([x]) => x!,
    });
    const registry = createOpRegistry([softcap]);
    const b = new GraphBuilder({ registry });
    b.input("x", [2, 3]);
    const g = b.output(b.add("softcap", "c", { x: "x" }, { cap: 30 })).build();
    const text = JSON.stringify(toJSON(g));
    expect(JSON.stringify(toJSON(fromJSON(text, registry)))).toBe(text);
    expect(validationError(() => fromJSON(text)).code).toBe("unknown-op");
  });

  it("hands out copies: changing the JSON never changes the graph", () => {
    const { graph } = standardAttention();
    const j = toJSON(graph) as any;
    j.nodes[1].attrs.shape.push(99);
    j.nodes[0].inputs.x = "other";
    j.inputs[0].shape[0] = 1;
    expect(graph.node("queries.split").attrs.shape).toEqual(["B", "T", 2, 4]);
    expect(graph.node("queries").inputs.x).toBe("x");
    expect(graph.inputs[0]!.shape).toEqual(["B", "T", 8]);
    expect(Object.isFrozen(graph.node("queries.split").attrs.shape)).toBe(true);
  });

  it("accepts a node without attrs", () => {
    const d = jsonDoc();
    delete d.nodes[0].attrs;
    expect(fromJSON(d).node("q").attrs).toEqual({});
  });
});

describe("fromJSON: format errors name the JSON path", () => {
  it("an unknown format version names $.version", () => {
    for (const version of [3, 0, "1", null]) {
      const d = jsonDoc();
      d.version = version;
      const e = formatError(() => fromJSON(d));
      expect(e.subject).toBe("$.version");
      expect(e.code).toBe("format");
      expect(e.expected).toBe("1 or 2");
    }
    const d = jsonDoc();
    delete d.version;
    expect(formatError(() => fromJSON(d)).got).toBe("undefined");
  });

  it("a document of another format names $.format", () => {
    const d = jsonDoc();
    d.format = "onnx";
    expect(formatError(() => fromJSON(d)).subject).toBe("$.format");
  });

  it("wrong types name the path of the field", () => {
    const cases: [(d: any) => void, string][] = [
      [(d) => (d.inputs = {}), "$.inputs"],
      [(d) => (d.weights = null), "$.weights"],
      [(d) => (d.inputs[0] = "x"), "$.inputs[0]"],
      [(d) => (d.inputs[0].name = 3), "$.inputs[0].name"],
      [(d) => (d.inputs[0].name = ""), "$.inputs[0].name"],
      [(d) => (d.inputs[0].shape = "B,T,8"), "$.inputs[0].shape"],
      [(d) => (d.inputs[0].shape[1] = -2), "$.inputs[0].shape[1]"],
      [(d) => (d.weights[0].shape[0] = 1.5), "$.weights[0].shape[0]"],
      [(d) => (d.weights[0].shape[0] = true), "$.weights[0].shape[0]"],
      [(d) => (d.nodes = "q"), "$.nodes"],
      [(d) => (d.nodes[1] = []), "$.nodes[1]"],
      [(d) => (d.nodes[1].kind = 7), "$.nodes[1].kind"],
      [(d) => delete d.nodes[1].name, "$.nodes[1].name"],
      [(d) => (d.nodes[0].inputs = ["x", "W"]), "$.nodes[0].inputs"],
      [(d) => (d.nodes[0].inputs.weight = 1), "$.nodes[0].inputs.weight"],
      [(d) => (d.nodes[1].attrs = [0.5]), "$.nodes[1].attrs"],
      [(d) => (d.outputs = "s"), "$.outputs"],
      [(d) => (d.outputs[0] = null), "$.outputs[0]"],
    ];
    for (const [spoil, path] of cases) {
      const d = jsonDoc();
      spoil(d);
      const e = formatError(() => fromJSON(d));
      expect(e.subject, path).toBe(path);
      expect(e.message.startsWith(`${path}: `)).toBe(true);
      expect(e.expected).toBeDefined();
      expect(e.got).toBeDefined();
    }
  });

  it("an unknown field is an error, not silently ignored", () => {
    const d = jsonDoc();
    d.nodes[1].attr = { scale: 2 }; // misspelt: would otherwise build softmax with scale 1
    delete d.nodes[1].attrs;
    const e = formatError(() => fromJSON(d));
    expect(e.subject).toBe("$.nodes[1].attr");
    expect(e.message).toContain("unknown field");
    const top = jsonDoc();
    top.extra = 1;
    expect(formatError(() => fromJSON(top)).subject).toBe("$.extra");
    const decl = jsonDoc();
    decl.inputs[0].dtype = "float32";
    expect(formatError(() => fromJSON(decl)).subject).toBe("$.inputs[0].dtype");
  });

  it("a document that is not an object", () => {
    for (const v of [null, 3, [], '"graph"', undefined]) expect(formatError(() => fromJSON(v)).subject).toBe("$");
  });

  it("an invalid JSON string", () => {
    const e = formatError(() => fromJSON('{"format": "attngraph.graph", '));
    expect(e.subject).toBe("$");
    expect(e.message).toContain("not valid JSON");
  });

  // A hang guard, not a speed check: alone this takes a few seconds, on a loaded 2-core CI machine it has taken 41 s.
  it("10 MB of garbage is a GraphFormatError, never a raw crash, and the message stays short", {
    timeout: 180_000,
  }, () => {
    const buf = new Uint8Array(10_000_000);
    let seed = 1;
    for (let i = 0; i < buf.length; i++) {
      seed = (seed * 48271) % 2147483647;
      buf[i] = 32 + (seed % 95); // printable ASCII
    }
    const bytes = new TextDecoder("latin1").decode(buf);
    const garbage = [
      bytes,
      `{${bytes}`,
      "[".repeat(1_000_000) + "]".repeat(1_000_000), // valid JSON, nested a million deep
      "[".repeat(1_000_000), // truncated nesting
      '{"a":'.repeat(2_000_000),
      JSON.stringify(bytes), // one valid 10 MB string
      JSON.stringify({ format: bytes }),
      JSON.stringify({
        ...jsonDoc(),
        inputs: Array.from({ length: 200_000 }, (_, i) => ({ name: `x${i}`, shape: [bytes.slice(i, i + 40), -1] })),
      }),
      "\u0000".repeat(10_000_000),
    ];
    for (const g of garbage) {
      const e = formatError(() => fromJSON(g));
      expect(e.message.length).toBeLessThan(400);
    }
  });

  it("deep nesting inside a well-formed document is reported, not a stack overflow", () => {
    const deep = "[".repeat(1_000_000) + "]".repeat(1_000_000);
    const text = `{"format":"attngraph.graph","version":1,"inputs":[{"name":"x","shape":[${deep}]}],"weights":[],"nodes":[],"outputs":[]}`;
    expect(formatError(() => fromJSON(text)).subject).toBe("$.inputs[0].shape[0]");
    const inAttrs = `{"format":"attngraph.graph","version":1,"inputs":[{"name":"x","shape":[2]}],"weights":[],"nodes":[{"name":"s","kind":"softmax","inputs":{"x":"x"},"attrs":{"scale":${deep}}}],"outputs":["s"]}`;
    const e = validationError(() => fromJSON(inAttrs));
    expect(e.subject).toBe("s.scale");
    expect(e.message.length).toBeLessThan(400);
  });
});
