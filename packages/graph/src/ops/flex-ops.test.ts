// score-mod, mask-mod and score-mod-input-grad: shape rules, the expression checked against the gathered inputs'
// ranks (typed errors naming the node, the field and the sub-expression), slots and names kept in step, the node's
// copy of the expression independent of the caller's, and graph JSON that loads back to the same graph.
import { describe, expect, it } from "vitest";
import { GraphBuilder } from "../builder.js";
import { GraphValidationError } from "../errors.js";
import { fromJSON, toJSON } from "../json.js";
import { alibiScoreMod } from "../expr/mods.js";

const alibi = alibiScoreMod();
const causal = { op: "ge", args: ["q", "kv"] };

function builder() {
  const b = new GraphBuilder();
  b.input("s", ["B", 4, "L", "S"]);
  b.input("slopes", [4]);
  b.input("doc", ["B", "L"]);
  return b;
}

describe("score-mod and mask-mod", () => {
  it("keep the scores' shape, check the expression, and round-trip through graph JSON", () => {
    const b = builder();
    const mod = b.add("score-mod", "m", { x: "s", g0: "slopes" }, { scale: 0.5, expr: alibi, inputs: ["slopes"] });
    const masked = b.add("mask-mod", "k", { x: mod }, { expr: causal });
    expect(b.shapeOf(mod)).toEqual(["B", 4, "L", "S"]);
    const graph = b.output(masked).build();
    const json = JSON.stringify(toJSON(graph));
    expect(JSON.stringify(toJSON(fromJSON(json)))).toBe(json);
    expect(fromJSON(json).node("m").attrs).toEqual({ scale: 0.5, expr: alibi, inputs: ["slopes"] });
  });

  it("copies the expression: changing the caller's object afterwards changes no node", () => {
    const b = builder();
    const expr = JSON.parse(JSON.stringify(causal));
    b.output(b.add("mask-mod", "k", { x: "s" }, { expr }));
    expr.op = "lt";
    expect((b.build().node("k").attrs["expr"] as { op: string }).op).toBe("ge");
  });

  it.each([
    [
      { x: "s" },
      { expr: alibi },
      /m\.expr\.args\[1\]\.args\[0\]\.name: no gathered input of this name, expected no gathered inputs are declared, got "slopes"/,
    ],
    [
      { x: "s", g0: "doc" },
      { expr: alibi, inputs: ["slopes"] },
      /m\.expr\.args\[1\]\.args\[0\]\.index: slopes has 2 axes/,
    ],
    [
      { x: "s" },
      { expr: alibi, inputs: ["slopes"] },
      /m\.g0: missing gathered input slopes, expected a tensor in this slot, got nothing/,
    ],
    [
      { x: "s", g0: "slopes", g1: "doc" },
      { expr: alibi, inputs: ["slopes"] },
      /m\.g1: a tensor in a slot no name is given for/,
    ],
    [
      { x: "s", g0: "slopes", g1: "doc" },
      { expr: alibi, inputs: ["slopes", "slopes"] },
      /m\.inputs: a gathered input named twice/,
    ],
    [{ x: "s", g0: "slopes" }, { expr: alibi, inputs: ["q"] }, /m\.inputs: invalid gathered input name/],
    [{ x: "s" }, { expr: causal }, /m\.expr: a score modification must be a number/],
    [{ x: "s" }, { expr: [1, 2] }, /m\.expr: invalid attribute, expected an expression/],
    [{ x: "slopes" }, { expr: "score" }, /m\.x: input must have rank 4/],
  ])("score-mod %j %j is refused", (inputs, attrs, message) => {
    const b = builder();
    const run = () => b.add("score-mod", "m", inputs, attrs);
    expect(run).toThrow(GraphValidationError);
    expect(run).toThrow(message);
  });

  it("a mask modification may not read the score; score-mod-input-grad names a gathered input and has its shape", () => {
    const b = builder();
    expect(() => b.add("mask-mod", "k", { x: "s" }, { expr: { op: "gt", args: ["score", 0] } })).toThrow(
      /k\.expr\.args\[0\]: a mask modification cannot read the score/,
    );
    const g = b.add(
      "score-mod-input-grad",
      "dg",
      { x: "s", grad: "s", g0: "slopes" },
      { expr: alibi, inputs: ["slopes"], wrt: "slopes" },
    );
    expect(b.shapeOf(g)).toEqual([4]);
    expect(() =>
      b.add(
        "score-mod-input-grad",
        "dh",
        { x: "s", grad: "s", g0: "slopes" },
        { expr: alibi, inputs: ["slopes"], wrt: "doc" },
      ),
    ).toThrow(/dh\.wrt: not a gathered input of the expression/);
  });
});
