import { describe, expect, it } from "vitest";
import { BLOCK_ALL, BLOCK_NONE, BLOCK_SOME, BlockClasses, classifyBlock, type BlockClass } from "./block-class.js";
import { checkExpr } from "./check.js";
import { compileExpr, type GatheredTensor } from "./compile.js";
import type { Expr } from "./types.js";

const read = (name: string, ...index: Expr[]): Expr => ({ op: "input", name, index });
const tensor = (data: number[], shape: number[]): GatheredTensor => ({
  data: Float32Array.from(data),
  shape,
  strides: shape.map((_, a) => shape.slice(a + 1).reduce((p, n) => p * n, 1)),
  offset: 0,
});
const [B, H, T] = [2, 3, 24];
const doc = tensor(
  Array.from({ length: B * T }, (_, i) => Math.floor((i % T) / (i < T ? 7 : 5))),
  [B, T],
);
const docNaN = tensor(
  Array.from({ length: B * T }, (_, i) => (i === 3 ? NaN : Math.floor((i % T) / 7))),
  [B, T],
);
const slopes = tensor([0.5, 0.25, 0.125], [H]);
const gathered = new Map([
  ["doc", doc],
  ["slopes", slopes],
]);

const masks: [string, Expr, ReadonlyMap<string, GatheredTensor>][] = [
  ["causal", { op: "ge", args: ["q", "kv"] }, gathered],
  [
    "window 5",
    {
      op: "and",
      args: [
        { op: "ge", args: ["q", "kv"] },
        { op: "lt", args: [{ op: "sub", args: ["q", "kv"] }, 5] },
      ],
    },
    gathered,
  ],
  ["document", { op: "eq", args: [read("doc", "b", "q"), read("doc", "b", "kv")] }, gathered],
  [
    "document with a NaN id",
    { op: "eq", args: [read("doc", "b", "q"), read("doc", "b", "kv")] },
    new Map([["doc", docNaN]]),
  ],
  [
    "prefix-LM",
    {
      op: "or",
      args: [
        { op: "lt", args: ["kv", 6] },
        { op: "ge", args: ["q", "kv"] },
      ],
    },
    gathered,
  ],
  [
    "a float threshold",
    { op: "lt", args: [{ op: "mul", args: [read("slopes", "h"), { op: "sub", args: ["q", "kv"] }] }, 1.5] },
    gathered,
  ],
  [
    "where and mod",
    {
      op: "where",
      args: [
        { op: "eq", args: [{ op: "mod", args: ["h", 2] }, 0] },
        { op: "ge", args: ["q", "kv"] },
        { op: "le", args: ["q", "kv"] },
      ],
    },
    gathered,
  ],
];

describe("block classes of a mask modification", () => {
  it.each(masks)("%s: never claims a block is all hidden or all seen when an element says otherwise", (_n, raw, g) => {
    const expr = checkExpr(raw, {
      subject: "m",
      role: "mask",
      inputs: new Map([...g].map(([n, t]) => [n, t.shape.length])),
    }).expr;
    const keep = compileExpr(expr, g, "m");
    const counts: Record<BlockClass, number> = { 0: 0, 1: 0, 2: 0 };
    for (const size of [4, 8])
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++)
          for (let q0 = 0; q0 < T; q0 += size)
            for (let k0 = 0; k0 < T; k0 += size) {
              const c = classifyBlock(
                expr,
                { b: [b, b], h: [h, h], q: [q0, q0 + size - 1], kv: [k0, k0 + size - 1] },
                g,
              );
              counts[c]++;
              let seen = 0;
              for (let i = q0; i < q0 + size; i++) for (let j = k0; j < k0 + size; j++) if (keep(0, b, h, i, j)) seen++;
              if (c === BLOCK_NONE) expect(seen, `block b${b} h${h} q${q0} kv${k0}`).toBe(0);
              if (c === BLOCK_ALL) expect(seen, `block b${b} h${h} q${q0} kv${k0}`).toBe(size * size);
            }
    // Useful, not only safe: positional and document masks skip and keep whole blocks.
    if (!/NaN|where/.test(_n)) expect(counts[BLOCK_NONE] + counts[BLOCK_ALL]).toBeGreaterThan(0);
  });

  it("a document mask's blocks across two documents are hidden; a NaN id makes its blocks 'some' (evaluated per pair)", () => {
    const m = masks[2]![1];
    expect(classifyBlock(m, { b: [0, 0], h: [0, 0], q: [0, 6], kv: [14, 20] }, gathered)).toBe(BLOCK_NONE);
    expect(classifyBlock(m, { b: [0, 0], h: [0, 0], q: [0, 6], kv: [0, 6] }, gathered)).toBe(BLOCK_ALL);
    expect(classifyBlock(m, { b: [0, 0], h: [0, 0], q: [0, 6], kv: [14, 20] }, new Map([["doc", docNaN]]))).toBe(
      BLOCK_SOME,
    );
  });

  it("BlockClasses shares a class across the heads when the mask does not read h", () => {
    const classes = new BlockClasses(masks[2]![1], gathered);
    expect(classes.of(0, 0, 0, 7, 14, 21)).toBe(BLOCK_NONE);
    expect(classes.of(0, 2, 0, 7, 14, 21)).toBe(BLOCK_NONE);
    expect(classes.of(1, 2, 0, 5, 0, 5)).toBe(BLOCK_ALL);
  });
});
