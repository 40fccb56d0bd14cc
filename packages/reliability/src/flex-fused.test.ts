// Variants stay fused: a chain score → score-mod → mask-mod [mask] → softmax [dropout] → weighted-sum and its backward
// become the fused attention steps on every executor (explain() says so and prints the modification), and their
// numbers equal the unfused chain's (every node tapped keeps it unfused): outputs and the gradients of q, k, v and a
// learnable gathered input, with grouped heads, L ≠ S, key padding, a positional mask and dropout mixed in.
import { buildAttention, flexAttention } from "@attngraph/attention";
import { grad } from "@attngraph/autodiff";
import { GraphBuilder, softCap, type Expr, type OpGraph } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { executors, hangDeadline } from "./executors.js";
import { prng, uniform } from "./prng.js";

const read = (name: string, ...index: Expr[]): Expr => ({ op: "input", name, index });
const sub = (a: Expr, b: Expr): Expr => ({ op: "sub", args: [a, b] });
const [B, H, HKV, L, S, D] = [2, 4, 2, 5, 7, 4];

interface Case {
  readonly name: string;
  readonly scoreMod?: unknown;
  readonly maskMod?: unknown;
  readonly gathered: Record<string, Tensor>;
  readonly learnable: readonly string[];
  /** A built-in mask in the chain as well: causal bottom-right and key padding. */
  readonly mask?: boolean;
  readonly dropout?: number;
}

const next = prng(77);
const slopes = new Tensor(uniform(H, 0.5, next), [H]);
const table = new Tensor(uniform(H * (L + S - 1), 0.5, next), [H, L + S - 1]);
const doc = Tensor.from([0, 0, 1, 1, 1, 2, 2, 0, 1, 1, 1, 1, 2, 2], [B, S]);
const cases: Case[] = [
  {
    name: "ALiBi (per-head slopes) with a window as a mask modification",
    scoreMod: { op: "add", args: ["score", { op: "mul", args: [read("slopes", "h"), sub("kv", "q")] }] },
    maskMod: { op: "lt", args: [sub("q", "kv"), 3] },
    gathered: { slopes },
    learnable: [],
  },
  {
    name: "soft-capping and a learnable relative bias table",
    scoreMod: softCap(
      { op: "add", args: ["score", read("table", "h", { op: "add", args: [sub("q", "kv"), S - 1] })] },
      3,
    ),
    gathered: { table },
    learnable: ["table"],
  },
  {
    name: "a document mask with the built-in causal mask, key padding and dropout",
    maskMod: { op: "eq", args: [read("doc", "b", { op: "min", args: ["q", S - 1] }), read("doc", "b", "kv")] },
    gathered: { doc },
    learnable: [],
    mask: true,
    dropout: 0.25,
  },
  {
    name: "a score modification alone, learnable slopes, with the built-in mask",
    scoreMod: { op: "add", args: ["score", { op: "mul", args: [read("slopes", "h"), sub("kv", "q")] }] },
    gathered: { slopes },
    learnable: ["slopes"],
    mask: true,
  },
];

function graphOf(c: Case): OpGraph {
  const b = new GraphBuilder();
  const q = b.input("q", [B, H, L, D]);
  const k = b.input("k", [B, HKV, S, D]);
  const v = b.input("v", [B, HKV, S, D]);
  const pad = c.mask ? b.input("pad", [B, S]) : undefined;
  const refs = Object.fromEntries(Object.entries(c.gathered).map(([n, t]) => [n, b.input(n, [...t.shape])]));
  const slots = (names: string[]) => Object.fromEntries(names.map((n, i) => [`g${i}`, refs[n]]));
  const reads = (e: unknown) =>
    Object.keys(c.gathered).filter((n) => JSON.stringify(e ?? null).includes(`"name":"${n}"`));
  let x = b.add("score", "scores", { q, k });
  if (c.scoreMod)
    x = b.add(
      "score-mod",
      "scores.mod",
      { x, ...slots(reads(c.scoreMod)) },
      { scale: 0.5, expr: c.scoreMod, inputs: reads(c.scoreMod) },
    );
  if (c.maskMod)
    x = b.add(
      "mask-mod",
      "masked.mod",
      { x, ...slots(reads(c.maskMod)) },
      { expr: c.maskMod, inputs: reads(c.maskMod) },
    );
  if (c.mask)
    x = b.add("mask", "masked", { scores: x, keyPaddingMask: pad }, { causal: true, alignment: "bottom-right" });
  let w = b.add("softmax", "probs", { x }, { scale: c.scoreMod ? 1 : 0.5 });
  if (c.dropout) w = b.add("dropout", "weights", { x: w }, { rate: c.dropout, seed: 5, training: true });
  return b.output(b.add("weighted-sum", "output", { weights: w, v })).build();
}

const inputsOf = (c: Case): Record<string, Tensor> => {
  const r = prng(9);
  return {
    q: new Tensor(uniform(B * H * L * D, 1, r), [B, H, L, D]),
    k: new Tensor(uniform(B * HKV * S * D, 1, r), [B, HKV, S, D]),
    v: new Tensor(uniform(B * HKV * S * D, 1, r), [B, HKV, S, D]),
    ...(c.mask ? { pad: Tensor.from([0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0], [B, S]) } : {}),
    ...c.gathered,
  };
};

describe.each(executors.map((e) => [e.name, e] as const))("%s: variants stay fused", (_name, entry) => {
  it.each(cases.map((c) => [c.name, c] as const))(
    "%s: fused forward and backward equal the unfused chain",
    async (_n, c) => {
      const g = grad(graphOf(c), { loss: "output", wrt: ["q", "k", "v", ...c.learnable] });
      const session = await compile(g.graph, { executors: [await entry.create()] });
      try {
        const inputs = { ...inputsOf(c), [g.seed!]: new Tensor(uniform(B * H * L * D, 1, prng(3)), [B, H, L, D]) };
        const shapes = Object.fromEntries(Object.entries(inputs).map(([n, t]) => [n, [...t.shape]]));
        const plan = session.explain({ inputs: shapes });
        expect(plan, "the plan fuses the chain and its backward").toContain(
          "pass attention backward fusion: fused output: forward → attention [",
        );
        for (const kind of ["score-mod", "mask-mod", "softmax", "score-mod-input-grad", "mask-grad"])
          expect(plan).not.toMatch(new RegExp(` ${kind} `));
        const fusedOut = await session.run(inputs);
        const unfusedOut = await session.run(inputs, {
          dropoutStep: 0,
          tap: { nodes: () => true, next: () => undefined },
        });
        const fusedAgain = await session.run(inputs, { dropoutStep: 0 });
        for (const name of ["output", ...["q", "k", "v", ...c.learnable].map((n) => g.grads[n]!)]) {
          const want = unfusedOut[name]!.toArray();
          const got = fusedAgain[name]!.toArray();
          expect(got.length).toBe(want.length);
          got.forEach((x, i) =>
            expect(Math.abs(x - want[i]!), `${name}[${i}]: fused ${x}, unfused ${want[i]}`).toBeLessThan(
              2e-5 * (1 + Math.abs(want[i]!)),
            ),
          );
        }
        expect(fusedOut["output"]!.shape).toEqual([B, H, L, D]);
      } finally {
        await session.dispose();
      }
    },
    hangDeadline(entry),
  );
});

// The built-in nodes a chain may hold, re-expressed as modifications: ALiBi, a user 0/1 mask, an additive bias (the
// worked examples' options), with key padding and (for the gradients) every weight learnable.
const builtins: { readonly name: string; readonly options: Parameters<typeof buildAttention>[1] }[] = [
  { name: "ALiBi", options: { position: { kind: "alibi" }, keyPaddingMask: true } },
  { name: "a user 0/1 mask", options: { userMask: "mask", keyPaddingMask: true } },
  { name: "an additive bias", options: { userMask: "bias" } },
];

describe.each(executors.map((e) => [e.name, e] as const))("%s: built-in variants stay fused", (_name, entry) => {
  it.each(builtins.map((c) => [c.name, c] as const))(
    "%s: the layer and its training gradients fuse and equal the unfused chain",
    async (_n, c) => {
      const [b, t, e] = [2, 6, 8];
      const graph = buildAttention({ dIn: e, dOut: e, numHeads: 2, causal: true }, c.options);
      const names = graph.weights.map((w) => w.name);
      const g = grad(graph, { loss: "output", wrt: ["x", ...names] });
      const r = prng(12);
      const weights = Object.fromEntries(
        graph.weights.map((w) => [
          w.name,
          new Tensor(
            uniform(
              w.shape.map(Number).reduce((p, n) => p * n, 1),
              0.5,
              r,
            ),
            w.shape.map(Number),
          ),
        ]),
      );
      const session = await compile(g.graph, { executors: [await entry.create()], weights });
      try {
        const inputs: Record<string, Tensor> = {
          x: new Tensor(uniform(b * t * e, 1, r), [b, t, e]),
          [g.seed!]: new Tensor(uniform(b * t * e, 1, r), [b, t, e]),
          ...(c.options?.keyPaddingMask
            ? { keyPaddingMask: Tensor.from([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1], [b, t]) }
            : {}),
          ...(c.options?.userMask === "mask"
            ? {
                mask: Tensor.from(
                  Array.from({ length: t * t }, (_, i) => (i % 5 === 3 ? 0 : 1)),
                  [t, t],
                ),
              }
            : {}),
          ...(c.options?.userMask === "bias" ? { bias: new Tensor(uniform(t * t, 1, r), [t, t]) } : {}),
        };
        const plan = session.explain({
          inputs: Object.fromEntries(Object.entries(inputs).map(([n, x]) => [n, [...x.shape]])),
        });
        expect(plan, "the plan fuses the chain and its backward").toMatch(
          /pass attention backward fusion: fused context\.heads: forward → attention \[/,
        );
        const fused = await session.run(inputs);
        const unfused = await session.run(inputs, { tap: { nodes: () => true, next: () => undefined } });
        for (const name of ["output", ...["x", ...names].map((n) => g.grads[n]!)]) {
          const want = unfused[name]!.toArray();
          fused[name]!.toArray().forEach((x, i) =>
            expect(Math.abs(x - want[i]!), `${name}[${i}]: fused ${x}, unfused ${want[i]}`).toBeLessThan(
              2e-5 * (1 + Math.abs(want[i]!)),
            ),
          );
        }
      } finally {
        await session.dispose();
      }
    },
    hangDeadline(entry),
  );
});

// Long enough for many key blocks: a document mask and a sliding window as mask modifications, whose blocks across
// documents or outside the window are skipped (block sparsity), against the unfused chain.
describe.each(executors.map((e) => [e.name, e] as const))(
  "%s: blocks a mask modification hides are skipped",
  (_name, entry) => {
    it(
      "a document mask and a window over 300 positions, with and without soft-capping, equal the unfused chain",
      async () => {
        const [b, h, t, d] = [1, 2, 300, 8];
        const docs = Tensor.from(
          Array.from({ length: t }, (_, i) => Math.floor(i / 70)),
          [b, t],
        );
        const masks = [
          {
            op: "and",
            args: [
              { op: "eq", args: [read("doc", "b", "q"), read("doc", "b", "kv")] },
              { op: "ge", args: ["q", "kv"] },
            ],
          },
          {
            op: "and",
            args: [
              { op: "ge", args: ["q", "kv"] },
              { op: "lt", args: [sub("q", "kv"), 100] },
            ],
          },
        ];
        const softcap = { op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: ["score", 2] }] }, 2] };
        // Each mask alone (blocks kept whole need no program at all) and with a score modification (they run it alone).
        for (const [maskMod, scoreMod] of masks.flatMap(
          (m) =>
            [
              [m, null],
              [m, softcap],
            ] as const,
        )) {
          const graph = flexAttention({ numHeads: h, headDim: d, maskMod, scoreMod, gathered: { doc: [b, t] } });
          const session = await compile(graph, { executors: [await entry.create()] });
          try {
            const r = prng(21);
            const inputs = {
              q: new Tensor(uniform(b * h * t * d, 1, r), [b, h, t, d]),
              k: new Tensor(uniform(b * h * t * d, 1, r), [b, h, t, d]),
              v: new Tensor(uniform(b * h * t * d, 1, r), [b, h, t, d]),
              doc: docs,
            };
            expect(
              session.explain({ inputs: { q: [b, h, t, d], k: [b, h, t, d], v: [b, h, t, d], doc: [b, t] } }),
            ).toMatch(/→ attention \[(score-mod: .*; )?mask-mod:/);
            const fused = (await session.run(inputs)).output!.toArray();
            const want = (
              await session.run(inputs, { tap: { nodes: () => true, next: () => undefined } })
            ).output!.toArray();
            fused.forEach((x, i) =>
              expect(Math.abs(x - want[i]!), `output[${i}]`).toBeLessThan(2e-5 * (1 + Math.abs(want[i]!))),
            );
          } finally {
            await session.dispose();
          }
        }
      },
      hangDeadline(entry),
    );
  },
);
