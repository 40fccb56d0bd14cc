// unprovedReads: the reads proved in range by interval arithmetic over the positions' ranges (ALiBi's slopes[h], a
// relative bias table, document ids) and those that are not (an index read from a tensor, one only a where guards, a
// table too small for the sizes).
import { describe, expect, it } from "vitest";
import { unprovedReads } from "./bounds.js";
import { checkExpr } from "./check.js";

const sizes = { B: 2, H: 4, L: 8, S: 8 };
const check = (raw: unknown, inputs: Record<string, number[]>) => {
  const { expr } = checkExpr(raw, {
    subject: "f",
    role: "score",
    inputs: new Map(Object.entries(inputs).map(([n, s]) => [n, s.length])),
  });
  return unprovedReads(expr, sizes, new Map(Object.entries(inputs)));
};
const read = (name: string, ...index: unknown[]) => ({ op: "input", name, index });

describe("unprovedReads", () => {
  it("proves slopes[h], table[h, q − kv + 7], doc[b, kv] and a mod by a constant", () => {
    expect(check({ op: "add", args: ["score", read("slopes", "h")] }, { slopes: [4] })).toEqual([]);
    expect(
      check(
        { op: "add", args: ["score", read("t", "h", { op: "add", args: [{ op: "sub", args: ["q", "kv"] }, 7] })] },
        { t: [4, 15] },
      ),
    ).toEqual([]);
    expect(check({ op: "mul", args: ["score", read("doc", "b", "kv")] }, { doc: [2, 8] })).toEqual([]);
    expect(check({ op: "add", args: ["score", read("t", { op: "mod", args: ["kv", 3] })] }, { t: [3] })).toEqual([]);
  });

  it("names what it cannot prove: a table too small, an index read from a tensor, a read only a where guards, a fraction", () => {
    expect(check({ op: "add", args: ["score", read("slopes", "h")] }, { slopes: [3] })).toEqual([".args[1]"]);
    expect(check({ op: "add", args: ["score", read("t", read("ids", "q"))] }, { t: [4], ids: [8] })).toEqual([
      ".args[1]",
    ]);
    expect(check({ op: "where", args: [{ op: "lt", args: ["kv", 3] }, read("t", "kv"), 0] }, { t: [3] })).toEqual([
      ".args[1]",
    ]);
    expect(check({ op: "add", args: ["score", read("t", { op: "floor", args: ["score"] })] }, { t: [4] })).toEqual([
      ".args[1]",
    ]);
  });
});

describe("unprovedReads: what does not prove a read", () => {
  it("a mod whose dividend is not an integer lies in [0, c), not [0, c − 1]; 0 · (something unbounded) is not 0", () => {
    // floor(mod(q / 2, 3) · 2) reaches 5 at q = 5 (mod(2.5, 3) = 2.5): an axis of 5 is not proved.
    const idx = {
      op: "floor",
      args: [{ op: "mul", args: [{ op: "mod", args: [{ op: "div", args: ["q", 2] }, 3] }, 2] }],
    };
    expect(check({ op: "add", args: ["score", read("t", idx)] }, { t: [5] })).toEqual([".args[1]"]);
    // 0 · floor(1 / (q − kv)) is NaN at q = kv.
    const nan = {
      op: "mul",
      args: [0, { op: "floor", args: [{ op: "div", args: [1, { op: "sub", args: ["q", "kv"] }] }] }],
    };
    expect(check({ op: "add", args: ["score", read("t", nan)] }, { t: [1] })).toEqual([".args[1]"]);
  });
});
