// Incremental decoding on every executor: a decode session fed a prompt and then one token (or a few) at a time
// gives, position for position, the outputs of one full causal run of the same weights on the same executor, for
// every attention variant that caches (multi-head, GQA, MQA, ALiBi, RoPE, a sliding window, fused QKV), untapped (the
// attention fuses) and with every node tapped; a sliding window decoding past its cache's length (its ring); and a
// whole pre-norm transformer block.
import {
  attentionWeights,
  buildAttention,
  normalizeConfig,
  type AttentionConfigInput,
  type AttentionOptions,
  type PositionEncoding,
} from "@attngraph/attention";
import { defaultInit, transformerBlock } from "@attngraph/nn";
import { compile, compileDecoder, DecodeError } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { mismatch, toleranceFor } from "./check.js";
import { executors } from "./executors.js";
import { prng, uniform } from "./prng.js";

interface Variant {
  readonly name: string;
  readonly config: AttentionConfigInput;
  readonly position?: PositionEncoding;
  readonly fusedQkv?: boolean;
}

const base = { dIn: 8, dOut: 16, numHeads: 4, causal: true, outProj: true, outBias: true, qkvBias: true } as const;
const variants: readonly Variant[] = [
  { name: "multi-head", config: base },
  { name: "GQA (4 heads, 2 kv heads)", config: { ...base, numKvHeads: 2 } },
  { name: "MQA (1 kv head)", config: { ...base, numKvHeads: 1 } },
  { name: "ALiBi", config: base, position: { kind: "alibi" } },
  { name: "RoPE", config: { ...base, numKvHeads: 2 }, position: { kind: "rope" } },
  { name: "sliding window 3", config: { ...base, window: 3 } },
  { name: "fused QKV", config: base, fusedQkv: true },
];
/** Tokens per call: a prompt, then one at a time; and a few at a time. */
const schedules: readonly (readonly number[])[] = [
  [3, 1, 1, 1, 1],
  [2, 2, 3],
];
const [B, T] = [2, 7];

function weightsFor(v: Variant, seed: number): Record<string, Tensor> {
  const c = normalizeConfig(v.config);
  const next = prng(seed);
  const D = c.dOut / c.numHeads;
  const ekv = c.numKvHeads * D;
  const t = (shape: number[], scale: number) =>
    new Tensor(
      uniform(
        shape.reduce((a, b) => a * b, 1),
        scale,
        next,
      ),
      shape,
    );
  const raw = {
    W_query: t([c.dOut, c.dIn], 0.35),
    W_key: t([ekv, c.dIn], 0.35),
    W_value: t([ekv, c.dIn], 0.35),
    b_query: t([c.dOut], 0.1),
    b_key: t([ekv], 0.1),
    b_value: t([ekv], 0.1),
    out_proj: t([c.dOut, c.dOut], 0.25),
    out_bias: t([c.dOut], 0.1),
  };
  return attentionWeights(c, raw, { fusedQkv: v.fusedQkv ?? false });
}

/** Positions [from, to) of x [B, T, E], dense. */
function positions(t: Tensor, from: number, to: number): Tensor {
  const [b, n, e] = t.shape as [number, number, number];
  const src = t.toFloat32Array();
  const out = new Float32Array(b * (to - from) * e);
  for (let i = 0; i < b; i++) out.set(src.subarray((i * n + from) * e, (i * n + to) * e), i * (to - from) * e);
  return new Tensor(out, [b, to - from, e]);
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: decoding with a KV cache", (_name, entry) => {
  it.each(variants.map((v) => [v.name, v] as const))(
    "%s: every schedule, untapped and tapped, equals the full causal run",
    async (_v, v) => {
      const options: AttentionOptions = {
        ...(v.position ? { position: v.position } : {}),
        ...(v.fusedQkv ? { fusedQkv: true } : {}),
      };
      const weights = weightsFor(v, 11);
      const x = new Tensor(uniform(B * T * 8, 1, prng(12)), [B, T, 8]);
      const executor = await entry.create();
      const full = await compile(buildAttention(v.config, options), { executors: [executor], weights });
      const want = (await full.run({ x })).output!;
      await full.dispose();
      const graph = buildAttention(v.config, { ...options, decode: true });
      for (const tapped of [false, true]) {
        for (const schedule of schedules) {
          const dec = await compileDecoder(graph, { executors: [executor], weights, maxLength: 8, batch: B });
          const sub = tapped ? dec.session.tap(graph.nodes.map((n) => n.name)).subscribe() : undefined;
          try {
            let at = 0;
            for (const n of schedule) {
              const got = (await dec.step({ x: positions(x, at, at + n) })).output!;
              const ref = positions(want, at, at + n);
              const label = `${v.name}, ${tapped ? "tapped" : "untapped"}, schedule ${schedule.join("+")}, positions ${at}..${at + n - 1}`;
              expect(
                mismatch(
                  label,
                  { shape: got.shape, data: got.toFloat32Array() },
                  { shape: ref.shape, data: ref.toFloat32Array() },
                  toleranceFor({ shape: ref.shape, data: ref.toFloat32Array() }),
                ),
              ).toBeUndefined();
              at += n;
            }
            expect(dec.length).toBe(T);
          } finally {
            sub?.unsubscribe();
            await dec.dispose();
          }
        }
      }
      await executor.dispose?.();
    },
  );

  it("a sliding window's ring (window 3, RoPE, GQA): 11 tokens through a cache of 5 positions equal the full causal run", async () => {
    const v: Variant = { name: "ring", config: { ...base, numKvHeads: 2, window: 3 }, position: { kind: "rope" } };
    const n = 11;
    const weights = weightsFor(v, 21);
    const x = new Tensor(uniform(B * n * 8, 1, prng(22)), [B, n, 8]);
    const executor = await entry.create();
    try {
      const full = await compile(buildAttention(v.config, { position: v.position! }), {
        executors: [executor],
        weights,
      });
      const want = (await full.run({ x })).output!;
      await full.dispose();
      const graph = buildAttention(v.config, { position: v.position!, decode: true });
      for (const schedule of [
        [2, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        [3, 2, 2, 2, 2],
      ]) {
        const dec = await compileDecoder(graph, { executors: [executor], weights, maxLength: 5, batch: B });
        let at = 0;
        for (const k of schedule) {
          const got = (await dec.step({ x: positions(x, at, at + k) })).output!;
          const ref = positions(want, at, at + k);
          expect(
            mismatch(
              `ring, schedule ${schedule.join("+")}, positions ${at}..${at + k - 1}`,
              { shape: got.shape, data: got.toFloat32Array() },
              { shape: ref.shape, data: ref.toFloat32Array() },
              toleranceFor({ shape: ref.shape, data: ref.toFloat32Array() }),
            ),
          ).toBeUndefined();
          at += k;
          expect(dec.cached).toBeLessThanOrEqual(5);
        }
        expect(dec.length).toBe(n);
        await dec.dispose();
      }
    } finally {
      await executor.dispose?.();
    }
  });

  it("a pre-norm transformer block (RoPE, fused QKV, GELU MLP): one token at a time equals the full causal run", async () => {
    const config = { embedDim: 8, nHeads: 2, causal: true, position: { kind: "rope" } } as const;
    const weights = defaultInit(transformerBlock(config), 5);
    const x = new Tensor(uniform(B * T * 8, 1, prng(6)), [B, T, 8]);
    const executor = await entry.create();
    try {
      const full = await compile(transformerBlock(config), { executors: [executor], weights });
      const want = (await full.run({ x })).output!;
      await full.dispose();
      const dec = await compileDecoder(transformerBlock(config, { decode: true }), {
        executors: [executor],
        weights,
        maxLength: T,
        batch: B,
      });
      for (let at = 0; at < T; at++) {
        const got = (await dec.step({ x: positions(x, at, at + 1) })).output!;
        const ref = positions(want, at, at + 1);
        expect(
          mismatch(
            `block, position ${at}`,
            { shape: got.shape, data: got.toFloat32Array() },
            { shape: ref.shape, data: ref.toFloat32Array() },
            toleranceFor({ shape: ref.shape, data: ref.toFloat32Array() }),
          ),
        ).toBeUndefined();
      }
      await dec.dispose();
    } finally {
      await executor.dispose?.();
    }
  });

  it("reset() and truncate() right after an un-awaited step are refused; the queued step computes with its prefix", async () => {
    const v: Variant = { name: "multi-head", config: base };
    const n = 7;
    const weights = weightsFor(v, 31);
    const x = new Tensor(uniform(B * n * 8, 1, prng(32)), [B, n, 8]);
    const executor = await entry.create();
    try {
      const full = await compile(buildAttention(v.config), { executors: [executor], weights });
      const want = (await full.run({ x })).output!;
      await full.dispose();
      const dec = await compileDecoder(buildAttention(v.config, { decode: true }), {
        executors: [executor],
        weights,
        maxLength: 8,
        batch: B,
      });
      await dec.step({ x: positions(x, 0, 3) });
      const p = dec.step({ x: positions(x, 3, 4) });
      expect(() => dec.reset()).toThrow(DecodeError);
      const got = (await p).output!;
      const ref = positions(want, 3, 4);
      expect(
        mismatch(
          "token 4 after a refused reset",
          { shape: got.shape, data: got.toFloat32Array() },
          { shape: ref.shape, data: ref.toFloat32Array() },
          toleranceFor({ shape: ref.shape, data: ref.toFloat32Array() }),
        ),
      ).toBeUndefined();
      expect(dec.length).toBe(4);
      for (let t = 4; t < 6; t++) await dec.step({ x: positions(x, t, t + 1) });
      const seventh = dec.step({ x: positions(x, 6, 7) });
      expect(() => dec.truncate(5)).toThrow(/a step is queued or running/);
      await seventh;
      expect(dec.length).toBe(7);
      dec.truncate(5);
      expect(dec.length).toBe(5);
      await dec.dispose();
    } finally {
      await executor.dispose?.();
    }
  });
});
