// Random attention cases for the property tests: every key of the golden format's config (FORMAT.md), the builder's
// fused-QKV option, key padding masks, and sizes 1..64 under a work budget so a case runs in about a millisecond.
// A case carries a seed instead of its numbers: fast-check then prints (and shrinks) a few integers, not 4k floats.
// Legend: B batch, H heads, Hkv kv heads, L = T query length, S key length, D head dim, E = dOut = H·D.
import { attentionWeights, buildAttention, normalizeConfig, type AttentionConfig } from "@attngraph/attention";
import type { OpGraph } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import fc from "fast-check";
import { prng, uniform } from "./prng.js";

export interface AttentionCase {
  /** Every key of the golden format's config, normalised. */
  readonly config: AttentionConfig;
  /** One W_qkv projection and three slices (the builder's `fusedQkv`), instead of three projections. */
  readonly fusedQkv: boolean;
  readonly B: number;
  readonly T: number;
  /** Key length: T unless cross-attention. */
  readonly S: number;
  /** A keyPaddingMask input [B, S], about one key in four padded (so some rows have every key hidden). */
  readonly padding: boolean;
  /** Inputs are uniform in [-magnitude, magnitude]; weights like nn.Linear's init, uniform in ±1/√fan_in. */
  readonly magnitude: number;
  readonly seed: number;
}

/** Multiply-adds of one run, roughly: projections, scores, weighted sum, output projection. */
export function work(c: AttentionCase): number {
  const { dIn, dOut: E, numHeads: H, numKvHeads: Hkv } = c.config;
  const D = E / H;
  return c.B * (c.T * dIn * E + 2 * c.S * dIn * Hkv * D + 2 * H * c.T * c.S * D + c.T * E * E);
}

/** Mostly small sizes, sometimes up to `max`: small cases find most bugs and shrink fast; large ones cover blocking. */
const size = (max: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: Math.min(8, max) }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max }) },
  );

/** Random valid cases whose `work` stays under `budget` multiply-adds. */
export function attentionCases(budget = 150_000): fc.Arbitrary<AttentionCase> {
  return fc
    .record({
      numKvHeads: fc.integer({ min: 1, max: 4 }),
      group: fc.integer({ min: 1, max: 3 }), // query heads per kv head: H = Hkv · group
      headDim: size(16),
      dIn: size(64),
      B: fc.integer({ min: 1, max: 3 }),
      T: size(64),
      S: size(64),
      mode: fc.constantFrom("self", "causal", "cross"),
      window: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
      qkvBias: fc.boolean(),
      outProj: fc.boolean(),
      outBias: fc.boolean(),
      scale: fc.option(
        fc.integer({ min: 1, max: 40 }).map((n) => n / 20),
        { nil: null },
      ),
      dropout: fc.constantFrom(0, 0, 0.25), // eval mode: the dropout node is there and must be the identity
      fusedQkv: fc.boolean(),
      padding: fc.boolean(),
      magnitude: fc.constantFrom(1, 0.25, 3),
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    })
    .map((r): AttentionCase => {
      const numHeads = r.numKvHeads * r.group;
      const config = normalizeConfig({
        dIn: r.dIn,
        dOut: numHeads * r.headDim,
        numHeads,
        numKvHeads: r.numKvHeads,
        causal: r.mode === "causal",
        window: r.mode === "causal" ? r.window : null,
        qkvBias: r.qkvBias,
        outProj: r.outProj,
        outBias: r.outProj && r.outBias,
        scale: r.scale,
        cross: r.mode === "cross",
        dropout: r.dropout,
      });
      const S = r.mode === "cross" ? r.S : r.T;
      return {
        config,
        fusedQkv: r.fusedQkv,
        B: r.B,
        T: r.T,
        S,
        padding: r.padding,
        magnitude: r.magnitude,
        seed: r.seed,
      };
    })
    .filter((c) => c.config.dOut <= 64 && work(c) <= budget);
}

export interface Materialized {
  readonly graph: OpGraph;
  /** Weights under the golden names (what the reference takes). */
  readonly raw: Record<string, Tensor>;
  /** Weights as the graph declares them (W_qkv with fusedQkv). */
  readonly weights: Record<string, Tensor>;
  readonly inputs: Record<string, Tensor>;
}

/** The graph, weights and inputs of a case, all drawn from its seed. */
export function materialize(c: AttentionCase): Materialized {
  const next = prng(c.seed);
  const { dIn, dOut: E, numHeads: H, numKvHeads: Hkv } = c.config;
  const Ekv = Hkv * (E / H);
  const linear = (rows: number, cols: number) =>
    new Tensor(uniform(rows * cols, 1 / Math.sqrt(cols), next), [rows, cols]);
  const bias = (n: number) => new Tensor(uniform(n, 0.5, next), [n]);
  const raw: Record<string, Tensor> = { W_query: linear(E, dIn), W_key: linear(Ekv, dIn), W_value: linear(Ekv, dIn) };
  if (c.config.qkvBias) Object.assign(raw, { b_query: bias(E), b_key: bias(Ekv), b_value: bias(Ekv) });
  if (c.config.outProj) raw.out_proj = linear(E, E);
  if (c.config.outBias) raw.out_bias = bias(E);
  const inputs: Record<string, Tensor> = {
    x: new Tensor(uniform(c.B * c.T * dIn, c.magnitude, next), [c.B, c.T, dIn]),
  };
  if (c.config.cross) inputs.kv = new Tensor(uniform(c.B * c.S * dIn, c.magnitude, next), [c.B, c.S, dIn]);
  if (c.padding)
    inputs.keyPaddingMask = Tensor.from(
      Array.from({ length: c.B * c.S }, () => (next() < 0.25 ? 1 : 0)),
      [c.B, c.S],
    );
  const graph = buildAttention(c.config, { fusedQkv: c.fusedQkv, keyPaddingMask: c.padding });
  return { graph, raw, weights: attentionWeights(c.config, raw, { fusedQkv: c.fusedQkv }), inputs };
}

/** A case as one line, for failure messages. */
export function describeCase(c: AttentionCase): string {
  return `${JSON.stringify(c.config)} fusedQkv=${c.fusedQkv} B=${c.B} T=${c.T} S=${c.S} padding=${c.padding} magnitude=${c.magnitude} seed=${c.seed}`;
}
