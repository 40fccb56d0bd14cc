// checkExpr: the golden-flex expressions check (with their types); every malformed one is a GraphValidationError naming
// the sub-expression's path, what was expected and what came.
import { describe, expect, it } from "vitest";
import { GraphValidationError } from "../errors.js";
import { checkExpr, inputsRead } from "./check.js";
import { alibiScoreMod, documentCausalMask } from "./mods.js";

const scope = (role: "score" | "mask", inputs: Record<string, number> = {}) => ({
  subject: "node f: mod",
  role,
  inputs: new Map(Object.entries(inputs)),
});
const alibi = alibiScoreMod();
const doc = documentCausalMask();

describe("checkExpr", () => {
  it("takes FlexAttention's variants as data, with their types, and copies them", () => {
    expect(checkExpr(alibi, scope("score", { slopes: 1 })).type).toBe("num");
    expect(checkExpr(doc, scope("mask", { doc: 2 })).type).toBe("bool");
    expect(
      checkExpr({ op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: ["score", 2] }] }, 2] }, scope("score"))
        .type,
    ).toBe("num");
    expect(checkExpr({ op: "add", args: ["q", 1] }, scope("score")).type).toBe("int");
    const raw = JSON.parse(JSON.stringify(alibi));
    const { expr } = checkExpr(raw, scope("score", { slopes: 1 }));
    raw.args[0] = "b";
    expect(expr).toEqual(alibi);
    expect(Object.isFrozen(expr)).toBe(true);
    expect([...inputsRead(checkExpr(doc, scope("mask", { doc: 2 })).expr)]).toEqual(["doc"]);
  });

  it.each([
    [
      { op: "pow", args: [1, 2] },
      "score",
      /node f: mod\.op: unknown operation, expected input or one of add, .*got "pow"/,
    ],
    [{ op: "add", args: ["score"] }, "score", /node f: mod\.args: add takes 2 arguments, expected 2, got 1/],
    [
      { op: "add", args: ["score", "x"] },
      "score",
      /node f: mod\.args\[1\]: unknown variable, expected score, b, h, q or kv, got "x"/,
    ],
    [{ op: "ge", args: ["score", "kv"] }, "mask", /node f: mod\.args\[0\]: a mask modification cannot read the score/],
    [{ op: "add", args: ["q", "kv"] }, "mask", /node f: mod: a mask modification must be true\/false/],
    [{ op: "lt", args: ["q", "kv"] }, "score", /node f: mod: a score modification must be a number/],
    [
      { op: "input", name: "t", index: ["h", 1.5] },
      "score",
      /node f: mod\.index\[1\]: an index must be an integer, expected an integer expression/,
    ],
    [
      { op: "input", name: "t", index: ["h", { op: "div", args: ["q", 2] }] },
      "score",
      /mod\.index\[1\]: an index must be an integer.*floor/,
    ],
    [
      { op: "input", name: "t", index: ["h"] },
      "score",
      /mod\.index: t has 2 axes: one index per axis, expected a list of 2, got 1/,
    ],
    [
      { op: "input", name: "nope", index: [] },
      "score",
      /mod\.name: no gathered input of this name, expected one of t, got "nope"/,
    ],
    [
      { op: "and", args: ["q", { op: "ge", args: ["q", "kv"] }] },
      "mask",
      /mod: and: wrong argument types, expected two true\/false values, got a number, true\/false/,
    ],
    [{ op: "where", args: ["q", 1, 2] }, "score", /mod: where: wrong argument types, expected a true\/false condition/],
    [Number.NaN, "score", /mod: invalid number, expected a finite float32 number/],
    [
      { op: "add", args: ["score", 3.5e38] },
      "score",
      /mod\.args\[1\]: invalid number, expected a finite float32 number/,
    ],
    [null, "score", /mod: invalid expression, expected a number, a variable or \{ op, args \}, got null/],
    [
      { op: "add", args: [1, 2], extra: 1 },
      "score",
      /mod: unknown field of an "add" expression, expected op and args, got "extra"/,
    ],
  ])("%j (%s) is refused", (raw, role, message) => {
    const run = () => checkExpr(raw, scope(role as "score" | "mask", { t: 2 }));
    expect(run).toThrow(GraphValidationError);
    expect(run).toThrow(message);
  });

  it("a gathered value may be an index (a document id), and a hostile size is refused quickly", () => {
    expect(
      checkExpr(
        { op: "input", name: "t", index: [{ op: "input", name: "ids", index: ["q"] }, "kv"] },
        scope("score", { t: 2, ids: 1 }),
      ).type,
    ).toBe("num");
    let deep: unknown = "score";
    for (let i = 0; i < 500; i++) deep = { op: "neg", args: [deep] };
    expect(() => checkExpr(deep, scope("score"))).toThrow(/nested too deeply/);
    const wide = { op: "add", args: [1, 1] } as { op: string; args: unknown[] };
    let e: unknown = wide;
    for (let i = 0; i < 150; i++) e = { op: "add", args: [e, e] }; // shared subtrees: 2^150 nodes if walked naively
    expect(() => checkExpr(e, scope("score"))).toThrow(/expression too large/);
  });
});
