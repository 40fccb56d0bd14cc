import { describe, expect, it } from "vitest";
import { standardAttention, validationError } from "../test/helpers.js";
import { OpGraph, type NodeSpec } from "./graph.js";
import { fromJSON, toJSON } from "./json.js";
import { createOpRegistry } from "./registry.js";

const registry = createOpRegistry();
const soft = (name: string, x: string): NodeSpec => ({ name, kind: "softmax", inputs: { x } });
const build = (nodes: NodeSpec[], outputs = [nodes[nodes.length - 1]!.name]): OpGraph =>
  OpGraph.create(registry, { inputs: [{ name: "x", shape: [2, 3] }], weights: [], nodes, outputs });

describe("OpGraph node order", () => {
  it("puts producers before consumers whatever the declaration order", () => {
    const g = build([soft("c", "b"), soft("b", "a"), soft("a", "x")], ["c"]);
    expect(g.nodes.map((n) => n.name)).toEqual(["a", "b", "c"]);
  });

  it("keeps declaration order wherever dependencies allow", () => {
    // a(x), b(a), c(x): a Kahn's queue would give a, c, b; declaration order is a, b, c and is valid
    expect(build([soft("a", "x"), soft("b", "a"), soft("c", "x")], ["b", "c"]).nodes.map((n) => n.name)).toEqual([
      "a",
      "b",
      "c",
    ]);
    // c must move after b, and the independent d keeps its place relative to the others
    const g = build([soft("c", "b"), soft("d", "x"), soft("a", "x"), soft("b", "a")], ["c", "d"]);
    expect(g.nodes.map((n) => n.name)).toEqual(["d", "a", "b", "c"]);
  });

  it("lists an already ordered graph unchanged, so JSON round-trips keep the node list", () => {
    const { graph } = standardAttention();
    const names = graph.nodes.map((n) => n.name);
    expect(names).toEqual([
      "queries",
      "queries.split",
      "queries.heads",
      "keys",
      "keys.split",
      "keys.heads",
      "values",
      "values.split",
      "values.heads",
      "scores",
      "masked",
      "softmax",
      "weights",
      "context.heads",
      "context.merge",
      "context",
      "output",
    ]);
    expect(fromJSON(toJSON(graph)).nodes.map((n) => n.name)).toEqual(names);
  });

  it("respects every edge on a shuffled standard graph", () => {
    const { graph } = standardAttention();
    const parts = graph.parts();
    for (let shift = 1; shift < parts.nodes.length; shift += 3) {
      const nodes = [...parts.nodes.slice(shift), ...parts.nodes.slice(0, shift)].reverse();
      const g = OpGraph.create(graph.registry, { ...parts, nodes });
      const pos = new Map(g.nodes.map((n, i) => [n.name, i]));
      for (const n of g.nodes)
        for (const src of Object.values(n.inputs))
          if (pos.has(src)) expect(pos.get(src)!).toBeLessThan(pos.get(n.name)!);
      expect(g.node("output").shape).toEqual(["B", "T", 8]);
    }
  });

  it("handles a chain of 20 000 nodes declared backwards, and a cycle through all of them", () => {
    const n = 20_000;
    const nodes = Array.from({ length: n }, (_, i) => soft(`n${n - 1 - i}`, i === n - 1 ? "x" : `n${n - 2 - i}`));
    const g = build(nodes, [`n${n - 1}`]);
    expect(g.nodes[0]!.name).toBe("n0");
    expect(g.nodes[n - 1]!.name).toBe(`n${n - 1}`);
    const cyclic = nodes.map((s) => (s.name === "n0" ? soft("n0", `n${n - 1}`) : s));
    const e = validationError(() => build(cyclic, ["n0"]));
    expect(e.code).toBe("cycle");
    // got is cut to 120 characters (messages stay short); its two ends show the cycle closing through every node.
    expect(e.got).toMatch(/^n19999 → n0 → n1 → n2 → .*….* → n19997 → n19998 → n19999$/);
  });

  it("accepts names that are Object.prototype members", () => {
    const g = build(
      [soft("__proto__", "x"), soft("constructor", "__proto__"), soft("toString", "constructor")],
      ["toString"],
    );
    expect(g.nodes.map((n) => n.name)).toEqual(["__proto__", "constructor", "toString"]);
    const e = validationError(() =>
      build([soft("toString", "constructor"), soft("constructor", "toString")], ["toString"]),
    );
    expect(e.code).toBe("cycle");
    expect(e.got).toBe("toString → constructor → toString");
  });
});

describe("OpGraph.create validation", () => {
  it("finds the cycle even when it does not start at the first node", () => {
    const e = validationError(() => build([soft("a", "x"), soft("b", "c"), soft("c", "b")], ["a"]));
    expect(e.code).toBe("cycle");
    expect(e.got).toBe("b → c → b");
    expect(e.subject).toBe("graph");
  });

  it("a dangling edge names node.slot", () => {
    const e = validationError(() => build([soft("a", "x"), soft("b", "ghost")]));
    expect(e.code).toBe("dangling-edge");
    expect(e.subject).toBe("b.x");
  });

  it("duplicate names across inputs, weights and nodes", () => {
    expect(validationError(() => build([soft("x", "x")])).code).toBe("duplicate-name");
    expect(validationError(() => build([soft("a", "x"), soft("a", "x")])).code).toBe("duplicate-name");
    const e = validationError(() =>
      OpGraph.create(registry, {
        inputs: [{ name: "x", shape: [1] }],
        weights: [{ name: "x", shape: [1] }],
        nodes: [soft("a", "x")],
        outputs: ["a"],
      }),
    );
    expect(e.subject).toBe("x");
  });

  it("an empty name", () => {
    expect(validationError(() => build([soft("", "x")])).message).toContain("invalid name");
  });

  it("outputs must be nodes", () => {
    expect(validationError(() => build([soft("a", "x")], ["x"])).subject).toBe("graph.outputs");
    expect(validationError(() => build([soft("a", "x")], [])).subject).toBe("graph.outputs");
  });

  it("is immutable", () => {
    const { graph } = standardAttention();
    expect(Object.isFrozen(graph.nodes)).toBe(true);
    expect(Object.isFrozen(graph.node("scores"))).toBe(true);
    expect(Object.isFrozen(graph.node("scores").shape)).toBe(true);
    expect(Object.isFrozen(graph.node("scores").inputs)).toBe(true);
    expect(Object.isFrozen(graph.node("masked").attrs)).toBe(true);
    expect(Object.isFrozen(graph.node("queries.heads").attrs.perm)).toBe(true);
    expect(Object.isFrozen(graph.inputs[0]!.shape)).toBe(true);
  });

  it("parts() gives back what it was made of", () => {
    const { graph } = standardAttention();
    const again = OpGraph.create(graph.registry, graph.parts());
    expect(JSON.stringify(toJSON(again))).toBe(JSON.stringify(toJSON(graph)));
  });
});
