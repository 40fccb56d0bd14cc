// fromJSON on graphs that break a rule (node errors, names Object.prototype holds, hostile documents): typed errors
// naming the node, short messages.
import { describe, expect, it } from "vitest";
import { formatError, jsonDoc, namedSlotOp, standardAttention, validationError } from "../test/helpers.js";
import { GraphBuilder } from "./builder.js";
import { fromJSON, toJSON, type GraphJSON } from "./json.js";
import { createOpRegistry } from "./registry.js";

describe("fromJSON: graph errors name the node", () => {
  it("a cycle (code cycle) lists the cycle path", () => {
    const d = jsonDoc();
    d.nodes = [
      { name: "a", kind: "softmax", inputs: { x: "c" }, attrs: {} },
      { name: "b", kind: "softmax", inputs: { x: "a" }, attrs: {} },
      { name: "c", kind: "softmax", inputs: { x: "b" }, attrs: {} },
      { name: "d", kind: "softmax", inputs: { x: "x" }, attrs: {} },
    ];
    d.outputs = ["d"];
    const e = validationError(() => fromJSON(d));
    expect(e.code).toBe("cycle");
    expect(e.got).toBe("a → b → c → a");
    expect(e.message).toContain("a → b → c → a");
  });

  // Node s reading x from `x` instead: the code, and each field named, of the error.
  it.each([
    { what: "a node reading itself is a cycle", x: "s", code: "cycle", fields: { got: "s → s" } },
    {
      what: "a dangling edge (code dangling-edge) names node.slot",
      x: "missing",
      code: "dangling-edge",
      fields: { subject: "s.x", got: '"missing"' },
    },
  ])("$what", ({ x, code, fields }) => {
    const d = jsonDoc();
    d.nodes[1].inputs.x = x;
    const e = validationError(() => fromJSON(d));
    expect(e.code).toBe(code);
    for (const [field, value] of Object.entries(fields)) expect(e[field as keyof typeof fields]).toBe(value);
  });

  it("an unknown op kind, unknown slot, bad attribute, duplicate name", () => {
    let d = jsonDoc();
    d.nodes[1].kind = "sofmax";
    expect(validationError(() => fromJSON(d)).code).toBe("unknown-op");
    d = jsonDoc();
    d.nodes[1].inputs.y = "x";
    expect(validationError(() => fromJSON(d)).subject).toBe("s.y");
    d = jsonDoc();
    d.nodes[1].attrs.scale = "big";
    expect(validationError(() => fromJSON(d)).subject).toBe("s.scale");
    d = jsonDoc();
    // biome-ignore lint/suspicious/noProto: an attribute named __proto__ is what this tries
    d.nodes[1].attrs.__proto__ = 1;
    d = JSON.parse(JSON.stringify(jsonDoc()).replace('"scale":0.5', '"scale":0.5,"__proto__":{"x":1}'));
    expect(validationError(() => fromJSON(d)).subject).toBe("s.__proto__");
    d = jsonDoc();
    d.nodes[1].name = "W";
    expect(validationError(() => fromJSON(d)).code).toBe("duplicate-name");
    d = jsonDoc();
    d.weights.push({ name: "x", shape: [1] });
    expect(validationError(() => fromJSON(d)).code).toBe("duplicate-name");
  });

  it("a bad shape names the node and field", () => {
    const d = jsonDoc();
    d.weights[0].shape = [8, 7];
    const e = validationError(() => fromJSON(d));
    expect(e.subject).toBe("q.weight");
  });

  it("orders nodes topologically even when the JSON lists them out of order", () => {
    const { graph } = standardAttention();
    const j = toJSON(graph);
    const reversed: GraphJSON = { ...j, nodes: [...j.nodes].reverse() };
    const g = fromJSON(reversed);
    const pos = new Map(g.nodes.map((n, i) => [n.name, i]));
    for (const n of g.nodes) {
      for (const src of Object.values(n.inputs)) if (pos.has(src)) expect(pos.get(src)!).toBeLessThan(pos.get(n.name)!);
    }
    expect(g.nodes.map((n) => n.shape)).toEqual(g.nodes.map((n) => graph.node(n.name).shape));
  });
});

describe("names that Object.prototype holds are ordinary names", () => {
  const names = ["valueOf", "constructor", "toString", "hasOwnProperty", "__proto__"];

  /** jsonDoc() with the value named `from` renamed wherever it is named (names are values in the document, never keys). */
  function renamed(from: string, to: string): string {
    const d = jsonDoc();
    const rename = (v: string): string => (v === from ? to : v);
    for (const v of [...d.inputs, ...d.weights, ...d.nodes]) v.name = rename(v.name);
    for (const n of d.nodes) for (const slot of Object.keys(n.inputs)) n.inputs[slot] = rename(n.inputs[slot]);
    d.outputs = d.outputs.map(rename);
    return JSON.stringify(d);
  }

  it.each(names)("%s as an input, a weight, a node and an output round-trips", (name) => {
    for (const [from, role] of [
      ["x", "input"],
      ["W", "weight"],
      ["s", "node"],
    ] as const) {
      const text = renamed(from, name);
      const g = fromJSON(text);
      expect(g.roleOf(name)).toBe(role);
      expect(JSON.stringify(toJSON(g))).toBe(text);
    }
  });

  it.each(names)("a user op's optional slot and attribute named %s survive the JSON round trip", (name) => {
    const op = namedSlotOp(name);
    const registry = createOpRegistry([op]);
    const b = new GraphBuilder({ registry });
    b.input("x", [2, 3]);
    b.add("named", "left", { x: "x" });
    b.add("named", "given", { x: "x", [name]: "left" }, { [name]: 5 });
    const text = JSON.stringify(toJSON(b.output("given").build()));
    const g = fromJSON(text, registry);
    expect(Object.entries(g.node("left").inputs)).toEqual([["x", "x"]]);
    expect(Object.entries(g.node("left").attrs)).toEqual([[name, 2]]);
    expect(Object.entries(g.node("given").inputs)).toEqual([
      ["x", "x"],
      [name, "left"],
    ]);
    expect(JSON.stringify(toJSON(g))).toBe(text);
  });
});

describe("hostile documents", () => {
  // Names are the user's strings and reach messages as subjects, quoted values and lists of choices; each is cut to
  // 120 characters with "…", so every message stays under the 600 characters docs/reliability.md promises.
  it("a 1 MB node name, field name or cycle gives a message under 600 characters", () => {
    const long = "n".repeat(1_000_000);
    const short = (e: { message: string }) => {
      expect(e.message.length).toBeLessThan(600);
      expect(e.message).toContain("…");
    };
    let d = jsonDoc();
    d.nodes[1].name = long;
    d.nodes[1].inputs.x = `missing${long}`;
    d.outputs = [long];
    const dangling = validationError(() => fromJSON(d));
    expect(dangling.code).toBe("dangling-edge");
    short(dangling);
    expect(dangling.subject).toMatch(/^n+…n*\.x$/);
    d = jsonDoc();
    d.nodes[0][long] = 1;
    short(formatError(() => fromJSON(d)));
    d = jsonDoc();
    d.nodes = Array.from({ length: 100_000 }, (_, i) => ({
      name: `node${i}`,
      kind: "softmax",
      inputs: { x: `node${(i + 1) % 100_000}` },
      attrs: {},
    }));
    d.outputs = ["node0"];
    const cycle = validationError(() => fromJSON(d));
    expect(cycle.code).toBe("cycle");
    short(cycle);
    d = jsonDoc();
    d.weights[0].name = long;
    d.nodes[0].inputs.weight = long;
    d.weights.push({ name: long, shape: [1] });
    short(validationError(() => fromJSON(d)));
  });

  it("graph.node() of an unknown name in a graph of many nodes lists them cut short", () => {
    const d = jsonDoc();
    for (let i = 0; i < 10_000; i++)
      d.nodes.push({ name: `extra${i}`, kind: "softmax", inputs: { x: "x" }, attrs: {} });
    const e = validationError(() => fromJSON(d).node("y".repeat(100_000)));
    expect(e.message.length).toBeLessThan(600);
    expect(e.expected).toMatch(/^one of q, s, extra0, .*…/);
  });

  it("a numeric attribute beyond the float32 range names the node and attribute", () => {
    const d = JSON.parse(JSON.stringify(jsonDoc()).replace('"scale":0.5', '"scale":1e39'));
    const e = validationError(() => fromJSON(d));
    expect(e.subject).toBe("s.scale");
    expect(e.message).toBe(
      "s.scale: invalid attribute, expected a number within the float32 range (|v| <= 3.4028234663852886e+38), got 1e+39",
    );
  });

  it("an unknown op kind of 10 kB is shown shortened: the message stays short (found by the reliability fuzz)", () => {
    const d = jsonDoc();
    d.nodes[1].kind = "x".repeat(10_000);
    const e = validationError(() => fromJSON(d));
    expect(e.code).toBe("unknown-op");
    expect(e.message.length).toBeLessThan(400);
    expect(e.message).toMatch(/^s: unknown op kind "x{70,80}\.\.\./);
  });
});
