// Score and mask modifications (score-mod, mask-mod, score-mod-input-grad) on every executor: variants written as
// expressions against the same attention written out in float64 (ALiBi + causal, a relative bias table with tanh
// soft-capping, a document mask, a read guarded by where, an index gathered from a tensor), the gradient of a
// learnable bias table against finite differences of the float64 attention, and a gathered read out of range as the
// same typed error on each executor (never a NaN, never a read past the input).
import { flexAttention } from "@attngraph/attention";
import { grad } from "@attngraph/autodiff";
import { GraphBuilder, softCap, type Expr, type OpGraph } from "@attngraph/graph";
import { compile, type Session } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { executors, hangDeadline } from "./executors.js";
import { prng, uniform } from "./prng.js";

const [B, H, T, D] = [2, 2, 6, 4];
const next = prng(41);
const q = new Tensor(uniform(B * H * T * D, 1, next), [B, H, T, D]);
const k = new Tensor(uniform(B * H * T * D, 1, next), [B, H, T, D]);
const v = new Tensor(uniform(B * H * T * D, 1, next), [B, H, T, D]);
const slopes = Tensor.from([0.5, 0.25], [2]);
const table = new Tensor(uniform(H * (2 * T - 1), 0.5, next), [H, 2 * T - 1]);
const doc = Tensor.from([0, 0, 1, 1, 1, 2, 0, 1, 1, 1, 2, 2], [B, T]);
const ids = Tensor.from([3, 0, 1, 2, 1, 0], [T]); // a permutation-ish index per query, read from a tensor
const read = (name: string, ...index: Expr[]): Expr => ({ op: "input", name, index });
const causal = { op: "ge", args: ["q", "kv"] };

interface Variant {
  readonly name: string;
  readonly scoreMod?: unknown;
  readonly maskMod?: unknown;
  readonly gathered: Record<string, Tensor>;
  /** The modified score and whether the key is seen, in float64. */
  readonly ref: (s: number, b: number, h: number, i: number, j: number) => { score: number; seen: boolean };
}

const variants: Variant[] = [
  {
    name: "ALiBi + causal",
    scoreMod: {
      op: "add",
      args: ["score", { op: "mul", args: [read("slopes", "h"), { op: "sub", args: ["kv", "q"] }] }],
    },
    maskMod: causal,
    gathered: { slopes },
    ref: (s, _b, h, i, j) => ({ score: s + [0.5, 0.25][h]! * (j - i), seen: i >= j }),
  },
  {
    name: "soft-capped relative bias table",
    scoreMod: softCap(
      {
        op: "add",
        args: ["score", read("table", "h", { op: "add", args: [{ op: "sub", args: ["q", "kv"] }, T - 1] })],
      },
      2,
    ),
    gathered: { table },
    ref: (s, _b, h, i, j) => ({
      score: 2 * Math.tanh((s + table.toArray()[h * (2 * T - 1) + i - j + T - 1]!) / 2),
      seen: true,
    }),
  },
  {
    name: "document mask + causal",
    maskMod: { op: "and", args: [{ op: "eq", args: [read("doc", "b", "q"), read("doc", "b", "kv")] }, causal] },
    gathered: { doc },
    ref: (s, b, _h, i, j) => ({ score: s, seen: doc.toArray()[b * T + i] === doc.toArray()[b * T + j] && i >= j }),
  },
  {
    name: "a read where guards, and an index read from a tensor",
    scoreMod: {
      op: "add",
      args: [
        "score",
        {
          op: "where",
          args: [
            { op: "lt", args: ["kv", 2] },
            read("slopes", "kv"),
            read("slopes", { op: "mod", args: [read("ids", "q"), 2] }),
          ],
        },
      ],
    },
    gathered: { slopes, ids },
    ref: (s, _b, _h, i, j) => ({
      score: s + (j < 2 ? [0.5, 0.25][j]! : [0.5, 0.25][ids.toArray()[i]! % 2]!),
      seen: true,
    }),
  },
];

/** The variant's attention output [B, H, T, D] in float64 (a row that sees nothing is 0). */
function reference(variant: Variant, t: Readonly<Record<string, Tensor>> = {}): Float64Array {
  const [qd, kd, vd] = [q.toArray(), k.toArray(), v.toArray()];
  const out = new Float64Array(B * H * T * D);
  const refFn = t["table"]
    ? (s: number, _b: number, h: number, i: number, j: number) => ({
        score: 2 * Math.tanh((s + t["table"]!.toArray()[h * (2 * T - 1) + i - j + T - 1]!) / 2),
        seen: true,
      })
    : variant.ref;
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < T; i++) {
        const scores = Array.from({ length: T }, (_, j) => {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += qd[((b * H + h) * T + i) * D + d]! * kd[((b * H + h) * T + j) * D + d]!;
          return refFn(dot / Math.sqrt(D), b, h, i, j);
        });
        const m = Math.max(...scores.filter((x) => x.seen).map((x) => x.score));
        const e = scores.map((x) => (x.seen ? Math.exp(x.score - m) : 0));
        const z = e.reduce((a, x) => a + x, 0);
        for (let d = 0; d < D; d++)
          out[((b * H + h) * T + i) * D + d] =
            z === 0 ? 0 : e.reduce((a, w, j) => a + (w / z) * vd[((b * H + h) * T + j) * D + d]!, 0);
      }
  return out;
}

function graphOf(variant: Variant) {
  return flexAttention({
    numHeads: H,
    headDim: D,
    scoreMod: variant.scoreMod ?? null,
    maskMod: variant.maskMod ?? null,
    gathered: Object.fromEntries(Object.entries(variant.gathered).map(([n, t]) => [n, [...t.shape]])),
  });
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: score and mask modifications", (_name, entry) => {
  /** `graph` compiled on a new executor of this entry, handed to `body`, and disposed however `body` ends. */
  async function withSession(graph: OpGraph, body: (s: Session) => Promise<void>): Promise<void> {
    const s = await compile(graph, { executors: [await entry.create()] });
    try {
      await body(s);
    } finally {
      await s.dispose();
    }
  }

  it.each(variants.map((v) => [v.name, v] as const))(
    "%s equals the float64 attention, untapped and with every node tapped",
    async (_v, variant) => {
      await withSession(graphOf(variant), async (s) => {
        const want = reference(variant);
        for (const tapped of [false, true]) {
          const out = (
            await s.run(
              { q, k, v, ...variant.gathered },
              tapped ? { tap: { nodes: () => true, next: () => undefined } } : {},
            )
          ).output!.toArray();
          out.forEach((x, i) =>
            expect(Math.abs(x - want[i]!), `${tapped ? "tapped" : "untapped"} output[${i}]`).toBeLessThan(2e-6),
          );
        }
      });
    },
    hangDeadline(entry),
  );

  it(
    "the gradient of a learnable bias table equals finite differences of the float64 attention",
    async () => {
      const variant = variants[1]!;
      const forward = graphOf(variant);
      const g = grad(forward, { loss: "output", wrt: ["table", "q"] });
      const seed = new Tensor(uniform(B * H * T * D, 1, prng(5)), [B, H, T, D]);
      await withSession(g.graph, async (s) => {
        const out = await s.run({ q, k, v, table, [g.seed!]: seed });
        const got = out[g.grads["table"]!]!.toArray();
        const loss = (t: Tensor) => reference(variant, { table: t }).reduce((a, x, i) => a + x * seed.toArray()[i]!, 0);
        for (let i = 0; i < table.size; i += 3) {
          const bump = (d: number) =>
            Tensor.from(
              table.toArray().map((x, j) => (j === i ? x + d : x)),
              table.shape,
            );
          const fd = (loss(bump(1e-4)) - loss(bump(-1e-4))) / 2e-4;
          expect(Math.abs(got[i]! - fd), `table[${i}]: got ${got[i]}, finite differences ${fd}`).toBeLessThan(
            2e-4 * (1 + Math.abs(fd)),
          );
        }
      });
    },
    hangDeadline(entry),
  );

  it(
    "a gathered read out of range is the ExprIndexError naming the node and the read, and the session goes on",
    async () => {
      const variant = variants[0]!;
      await withSession(graphOf(variant), async (s) => {
        const short = Tensor.from([0.5], [1]).reshape([1]); // one slope for two heads
        const g2 = flexAttention({
          numHeads: H,
          headDim: D,
          scoreMod: variant.scoreMod,
          maskMod: causal,
          gathered: { slopes: [1] },
        });
        const bad = await compile(g2, { executors: [await entry.create()] });
        const e = await bad.run({ q, k, v, slopes: short }).catch((err: unknown) => err);
        // Unfused: the score-mod node's expression; fused (the chain became one attention step, named for its
        // weighted-sum): that step's scoreMod, the same sub-expression.
        expect((e as Error).message).toMatch(
          /(scores\.mod\.expr|output\.scoreMod)\.args\[1\]\.args\[0\]: gathered index 1 on axis 0 is out of range at b=0, h=1, q=0, kv=0, expected an integer in \[0, 1\)/,
        );
        await bad.dispose();
        expect((await s.run({ q, k, v, slopes })).output!.shape).toEqual([B, H, T, D]);
      });
    },
    hangDeadline(entry),
  );

  it(
    "a gathered input that is the scores themselves is read before anything overwrites them",
    async () => {
      // r[b, h, q, kv] = s[b, h, q, S − 1 − kv] where s is computed (its buffer could be reused for the output).
      const b = new GraphBuilder();
      const x = b.input("x", [B, H, T, T]);
      const s = b.add("score-mod", "s", { x }, { scale: 2, expr: "score" });
      const r = b.add(
        "score-mod",
        "r",
        { x: s, g0: s },
        { scale: 1, expr: read("self", "b", "h", "q", { op: "sub", args: [T - 1, "kv"] }), inputs: ["self"] },
      );
      await withSession(b.output(r).build(), async (session) => {
        const input = new Tensor(uniform(B * H * T * T, 1, prng(3)), [B, H, T, T]);
        const got = (await session.run({ x: input })).r!.toArray();
        const src = input.toArray();
        got.forEach((g, i) => expect(g, `element ${i}`).toBe(Math.fround(2 * src[i - (i % T) + (T - 1 - (i % T))]!)));
      });
    },
    hangDeadline(entry),
  );

  it(
    "integer mod and floor division are exact (kv = 41 is a multiple of 41), and a 150-deep expression runs",
    async () => {
      const n = 90;
      const xs = new Tensor(uniform(n, 1, prng(8)), [1, 1, 1, n]);
      const deep = Array.from({ length: 150 }, () => 0).reduce<unknown>(
        (e) => ({ op: "add", args: [e, 0.25] }),
        "score",
      );
      const cases: [unknown, "score-mod" | "mask-mod", (x: number, kv: number) => number][] = [
        [
          { op: "eq", args: [{ op: "mod", args: ["kv", 41] }, 0] },
          "mask-mod",
          (x, kv) => (kv % 41 === 0 ? x : -Infinity),
        ],
        [
          { op: "eq", args: [{ op: "floor", args: [{ op: "div", args: ["kv", 41] }] }, 1] },
          "mask-mod",
          (x, kv) => (Math.floor(kv / 41) === 1 ? x : -Infinity),
        ],
        [{ op: "mod", args: [{ op: "sub", args: [3, "kv"] }, 7] }, "score-mod", (_x, kv) => (((3 - kv) % 7) + 7) % 7],
        [deep, "score-mod", (x) => Array.from({ length: 150 }).reduce<number>((a) => Math.fround(a + 0.25), x)],
      ];
      for (const [expr, kind, want] of cases) {
        const b = new GraphBuilder();
        const out = b.add(
          kind,
          "m",
          { x: b.input("x", [1, 1, 1, n]) },
          kind === "score-mod" ? { scale: 1, expr } : { expr },
        );
        await withSession(b.output(out).build(), async (session) => {
          const got = (await session.run({ x: xs })).m!.toArray();
          // Exact, but for the long chain of float additions: a WGSL compiler may fold its constants (no strict IEEE order).
          const exact = expr !== deep;
          got.forEach((g, kv) => {
            const w = want(xs.toArray()[kv]!, kv);
            if (exact) expect(g, `${JSON.stringify(expr).slice(0, 60)} at kv=${kv}`).toBe(w);
            else expect(Math.abs(g - w), `the 150-deep chain at kv=${kv}`).toBeLessThan(1e-5 * (1 + Math.abs(w)));
          });
        });
      }
    },
    hangDeadline(entry),
  );

  it(
    "a key the mask hides passes no gradient, even where the score modification's derivative is infinite",
    async () => {
      const graph = flexAttention({
        numHeads: H,
        headDim: D,
        scoreMod: { op: "div", args: ["score", { op: "sub", args: ["q", "kv"] }] },
        maskMod: { op: "gt", args: ["q", "kv"] },
      });
      const g = grad(graph, { loss: "output", wrt: ["q", "k", "v"] });
      await withSession(g.graph, async (session) => {
        const out = await session.run({
          q,
          k,
          v,
          [g.seed!]: new Tensor(uniform(B * H * T * D, 1, prng(6)), [B, H, T, D]),
        });
        for (const n of ["q", "k", "v"])
          expect(out[g.grads[n]!]!.toArray().every(Number.isFinite), `${n}.grad is finite`).toBe(true);
      });
    },
    hangDeadline(entry),
  );
});
