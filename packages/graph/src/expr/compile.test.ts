// compileExpr: the generated function and the closure form (for pages that forbid generated code) agree with each
// other and with the FORMAT's semantics (Python's mod, comparisons, where); gathered reads out of range are typed
// errors naming the sub-expression and the position, never undefined or NaN.
import { describe, expect, it } from "vitest";
import { checkExpr } from "./check.js";
import { compileExpr, ExprIndexError, type GatheredTensor } from "./compile.js";
import { alibiScoreMod, documentCausalMask } from "./mods.js";

const tensor = (data: number[], shape: number[]): GatheredTensor => {
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  return { data: Float32Array.from(data), shape, strides, offset: 0 };
};
const both = (raw: unknown, role: "score" | "mask", inputs: Record<string, GatheredTensor> = {}, float64 = false) => {
  const scope = {
    subject: "node f: scoreMod",
    role,
    inputs: new Map(Object.entries(inputs).map(([k, t]) => [k, t.shape.length])),
  };
  const { expr } = checkExpr(raw, scope);
  const bound = new Map(Object.entries(inputs));
  return [
    compileExpr(expr, bound, "node f: scoreMod", { float64 }),
    compileExpr(expr, bound, "node f: scoreMod", { float64, closures: true }),
  ] as const;
};

describe("compileExpr", () => {
  it("ALiBi, a relative bias table, soft-capping and a document mask give the FORMAT's values, both forms alike", () => {
    const slopes = tensor([0.5, 0.25], [2]);
    const table = tensor(
      [...Array(15).keys()].map((i) => i / 10),
      [1, 15],
    );
    const doc = tensor([0, 0, 1, 1], [1, 4]);
    const cases: [
      unknown,
      "score" | "mask",
      Record<string, GatheredTensor>,
      (s: number, b: number, h: number, q: number, kv: number) => number | boolean,
    ][] = [
      [alibiScoreMod(), "score", { slopes }, (s, _b, h, q, kv) => s + [0.5, 0.25][h]! * (kv - q)],
      [
        {
          op: "add",
          args: [
            "score",
            { op: "input", name: "table", index: [0, { op: "add", args: [{ op: "sub", args: ["q", "kv"] }, 7] }] },
          ],
        },
        "score",
        { table },
        (s, _b, _h, q, kv) => s + Math.fround((q - kv + 7) / 10),
      ],
      [
        { op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: ["score", 2] }] }, 2] },
        "score",
        {},
        (s) => Math.tanh(s / 2) * 2,
      ],
      [documentCausalMask(), "mask", { doc }, (_s, _b, _h, q, kv) => [0, 0, 1, 1][q] === [0, 0, 1, 1][kv] && q >= kv],
      [
        { op: "eq", args: [{ op: "mod", args: [{ op: "sub", args: ["kv", "q"] }, 3] }, 1] },
        "mask",
        {},
        (_s, _b, _h, q, kv) => (((kv - q) % 3) + 3) % 3 === 1,
      ],
      [
        {
          op: "where",
          args: [
            { op: "lt", args: ["q", 2] },
            { op: "floor", args: [{ op: "sigmoid", args: ["score"] }] },
            { op: "max", args: ["score", { op: "abs", args: [-1] }] },
          ],
        },
        "score",
        {},
        (s, _b, _h, q) => (q < 2 ? Math.floor(1 / (1 + Math.exp(-s))) : Math.max(s, 1)),
      ],
    ];
    for (const [raw, role, inputs, want] of cases) {
      const [generated, closures] = both(raw, role, inputs, true); // float64: the reference's arithmetic
      for (let q = 0; q < 4; q++)
        for (let kv = 0; kv < 4; kv++)
          for (const s of [-2.5, 0, 0.75]) {
            const w = want(s, 0, 1, q, kv);
            expect(generated(s, 0, 1, q, kv), `${JSON.stringify(raw)} at q=${q} kv=${kv} s=${s}`).toBe(w);
            expect(closures(s, 0, 1, q, kv)).toBe(w);
          }
    }
  });

  it("Python's mod: the sign of the divisor", () => {
    const [f] = both({ op: "mod", args: [{ op: "sub", args: ["q", "kv"] }, 4] }, "score");
    expect([f(0, 0, 0, 0, 5), f(0, 0, 0, 5, 0), f(0, 0, 0, 3, 3)]).toEqual([3, 1, 0]);
    const [g] = both({ op: "mod", args: ["q", -4] }, "score");
    expect(g(0, 0, 0, 5, 0)).toBe(-3);
  });

  it("a read out of range, negative or at a fraction throws an ExprIndexError naming the read and the position", () => {
    const slopes = tensor([0.5, 0.25], [2]);
    const [generated, closures] = both(
      { op: "add", args: ["score", { op: "input", name: "slopes", index: ["kv"] }] },
      "score",
      { slopes },
    );
    for (const [f, form] of [
      [generated, "generated"],
      [closures, "closures"],
    ] as const) {
      expect(f(0, 0, 0, 0, 1), form).toBeCloseTo(0.25);
      expect(() => f(0, 1, 0, 3, 2), form).toThrow(ExprIndexError);
      expect(() => f(0, 1, 0, 3, 2), form).toThrow(
        /node f: scoreMod\.args\[1\]: gathered index 2 on axis 0 is out of range at b=1, h=0, q=3, kv=2, expected an integer in \[0, 2\)/,
      );
    }
    const ids = tensor([0, 1.5, -1], [3]);
    const [f] = both({ op: "input", name: "slopes", index: [{ op: "input", name: "ids", index: ["q"] }] }, "score", {
      slopes,
      ids,
    });
    expect(f(0, 0, 0, 0, 0)).toBe(0.5);
    expect(() => f(0, 0, 0, 1, 0)).toThrow(/gathered index 1\.5 on axis 0/);
    expect(() => f(0, 0, 0, 2, 0)).toThrow(/gathered index -1 on axis 0/);
  });

  it("a read in the branch where does not take is not made (a guarded read is not an error)", () => {
    const t = tensor([1, 2, 3], [3]);
    const [f, g] = both(
      { op: "where", args: [{ op: "lt", args: ["kv", 3] }, { op: "input", name: "t", index: ["kv"] }, 0] },
      "score",
      { t },
    );
    expect([f(0, 0, 0, 0, 2), f(0, 0, 0, 0, 5), g(0, 0, 0, 0, 5)]).toEqual([3, 0, 0]);
  });

  it("a negative literal under neg, and every step rounded to float32 (log(1 + exp(94)) overflows as it does in float32)", () => {
    const [f, g] = both({ op: "add", args: ["score", { op: "neg", args: [-5] }] }, "score");
    expect([f(1, 0, 0, 0, 0), g(1, 0, 0, 0, 0)]).toEqual([6, 6]);
    const [n] = both({ op: "div", args: [1, { op: "neg", args: [-0] }] }, "score");
    expect(n(0, 0, 0, 0, 0)).toBe(Infinity);
    const [sp, spc] = both({ op: "log", args: [{ op: "add", args: [1, { op: "exp", args: ["score"] }] }] }, "score");
    expect([sp(94, 0, 0, 0, 0), spc(94, 0, 0, 0, 0)]).toEqual([Infinity, Infinity]);
    const [tenth] = both({ op: "mul", args: ["score", 0.1] }, "score");
    expect(tenth(1, 0, 0, 0, 0)).toBe(Math.fround(0.1)); // the literal is the float32 0.1
  });
});
