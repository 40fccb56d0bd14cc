// derive: each rule against central finite differences in float64, with respect to the score and to a gathered read
// (a learnable bias table read twice: each read has its own derivative).
import { describe, expect, it } from "vitest";
import { checkExpr } from "./check.js";
import { compileExpr, readSites, type GatheredTensor } from "./compile.js";
import { derive, treeSize } from "./derive.js";
import type { Expr } from "./types.js";

const table: GatheredTensor = { data: Float32Array.from([0.3, -0.7, 1.1, 0.2]), shape: [4], strides: [1], offset: 0 };
const inputs = new Map([["t", table]]);
const check = (raw: unknown): Expr => checkExpr(raw, { subject: "f", role: "score", inputs: new Map([["t", 1]]) }).expr;
const fn = (e: Expr) =>
  compileExpr(e, inputs, "f", { float64: true }) as (s: number, b: number, h: number, q: number, kv: number) => number;
const T = { op: "input", name: "t", index: ["q"] };

const cases: unknown[] = [
  { op: "add", args: ["score", T] },
  { op: "sub", args: [T, { op: "mul", args: ["score", "score"] }] },
  { op: "div", args: ["score", { op: "add", args: [2, T] }] },
  { op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: ["score", 2] }] }, 2] },
  { op: "exp", args: [{ op: "mul", args: ["score", T] }] },
  { op: "log", args: [{ op: "add", args: [3, "score"] }] },
  { op: "sqrt", args: [{ op: "add", args: [3, { op: "mul", args: ["score", T] }] }] },
  { op: "sigmoid", args: [{ op: "sub", args: ["score", T] }] },
  { op: "neg", args: [{ op: "abs", args: [{ op: "sub", args: ["score", 0.1] }] }] },
  { op: "min", args: ["score", { op: "mul", args: [2, T] }] },
  { op: "max", args: ["score", { op: "mul", args: [2, T] }] },
  { op: "where", args: [{ op: "gt", args: ["score", 0] }, { op: "mul", args: ["score", T] }, T] },
  {
    op: "mod",
    args: [
      { op: "mul", args: ["score", 3] },
      { op: "add", args: [2, T] },
    ],
  },
  {
    op: "add",
    args: [
      { op: "floor", args: ["score"] },
      { op: "mul", args: [T, { op: "input", name: "t", index: ["kv"] }] },
    ],
  },
];

describe("derive", () => {
  it.each(cases.map((c) => [JSON.stringify(c), c]))(
    "%s: d/dscore and d/dread match finite differences",
    (_name, raw) => {
      const e = check(raw);
      const f = fn(e);
      const dScore = fn(derive(e, { kind: "score" }));
      const sites = readSites(e);
      for (const [s, q, kv] of [
        [0.4, 0, 1],
        [-0.9, 2, 3],
        [1.7, 3, 0],
      ] as const) {
        const h = 1e-6;
        const fd = (f(s + h, 0, 0, q, kv) - f(s - h, 0, 0, q, kv)) / (2 * h);
        expect(dScore(s, 0, 0, q, kv), `d/dscore at s=${s}`).toBeCloseTo(fd, 5);
        // Each read: perturb the table element it reads (alone: a second read of the same element is another site).
        for (const site of sites) {
          const d = fn(derive(e, { kind: "read", read: site.read }))(s, 0, 0, q, kv);
          const at = (site.read.index[0] === "q" ? q : kv) as number;
          const others = sites.filter((o) => o !== site && (o.read.index[0] === "q" ? q : kv) === at);
          if (others.length) continue; // two reads of one element: their sum is what a perturbation shows
          const bump = (delta: number) => {
            const data = Float64Array.from(table.data);
            data[at]! += delta;
            return compileExpr(e, new Map([["t", { ...table, data: Float32Array.from(data) }]]), "f", {
              float64: true,
            }) as (s: number, b: number, h: number, q: number, kv: number) => number;
          };
          const step = 1e-3; // float32 table: a larger step, and a looser comparison
          const fdRead = (bump(step)(s, 0, 0, q, kv) - bump(-step)(s, 0, 0, q, kv)) / (2 * step);
          expect(d, `d/d${site.path} at s=${s}`).toBeCloseTo(fdRead, 2);
        }
      }
    },
  );

  it("folds constants: d(score + t[q]) / dscore is 1, and a floor or a comparison has none", () => {
    expect(derive(check({ op: "add", args: ["score", T] }), { kind: "score" })).toBe(1);
    expect(derive(check({ op: "floor", args: ["score"] }), { kind: "score" })).toBe(0);
    expect(derive(check({ op: "mul", args: ["score", 3] }), { kind: "score" })).toBe(3);
  });

  it("nested min, max and abs stay small: each argument's derivative appears once", () => {
    let e: unknown = "score";
    for (let i = 0; i < 30; i++)
      e = { op: i % 3 === 2 ? "abs" : i % 2 ? "max" : "min", args: i % 3 === 2 ? [e] : [e, i / 10] };
    const checked = check(e);
    const d = derive(checked, { kind: "score" });
    expect(treeSize(d, 1e6)).toBeLessThan(10_000);
    const f = fn(checked);
    const df = fn(d);
    for (const s of [-0.55, 0.23, 1.7]) {
      const h = 1e-4;
      expect(df(s, 0, 0, 0, 0)).toBeCloseTo((f(s + h, 0, 0, 0, 0) - f(s - h, 0, 0, 0, 0)) / (2 * h), 2);
    }
  });
});
