// A whole attention block composed from dispatch calls (compose.ts), against the float64 reference on seeded random
// variants (GQA, MQA, cross, padding, window, scale, no output projection) and against the expected tensors of the
// golden cases. The golden part reads files, so it needs Node.
import { expect, it } from "vitest";
import { Tensor, type Tolerance } from "@attngraph/tensor";
import { normalizeConfig, type AttentionConfig, type AttentionConfigInput } from "@attngraph/attention";
import { referenceAttention } from "../reference/attention64.js";
import { referenceDropout } from "../reference/dropout64.js";
import { mask64, score64, softmax64, weightedSum64 } from "../reference/ops64.js";
import { attrs } from "./attrs.js";
import { composeAttention } from "./compose.js";
import type { ContractContext } from "./context.js";
import { expectClose } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

/** A chain of ten float32 kernels against float64: looser than a single op. */
const CHAIN_TOL: Tolerance = { abs: 1e-5, rel: 1e-4 };

interface Variant {
  readonly label: string;
  readonly config: AttentionConfigInput;
  readonly B: number;
  readonly L: number;
  /** Key length for cross attention. */
  readonly S?: number;
  /** [B, S] padding flags (1 = padded key). */
  readonly pad?: readonly number[];
}

const variants: readonly Variant[] = [
  {
    label: "GQA H=4/Hkv=2, causal, qkv bias, dIn != dOut",
    config: { dIn: 6, dOut: 16, numHeads: 4, numKvHeads: 2, causal: true, qkvBias: true },
    B: 2,
    L: 5,
  },
  {
    label: "MQA H=4/Hkv=1, cross, key padding",
    config: { dIn: 8, dOut: 8, numHeads: 4, numKvHeads: 1, cross: true },
    B: 2,
    L: 3,
    S: 6,
    pad: [0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1],
  },
  {
    label: "window 2, scale 0.3, no output projection",
    config: { dIn: 5, dOut: 6, numHeads: 2, causal: true, window: 2, scale: 0.3, outProj: false },
    B: 1,
    L: 6,
  },
  {
    label: "a fully padded batch entry",
    config: { dIn: 4, dOut: 8, numHeads: 2 },
    B: 2,
    L: 3,
    pad: [0, 1, 0, 1, 1, 1],
  },
];

function randomCase(
  v: Variant,
  seed: number,
): { config: AttentionConfig; weights: Record<string, Tensor>; inputs: Record<string, Tensor> } {
  const config = normalizeConfig(v.config);
  const rng = createRng(seed);
  const { dIn, dOut: E } = config;
  const Ekv = config.numKvHeads * (E / config.numHeads);
  const S = v.S ?? v.L;
  // nn.Linear's init range U(-1/sqrt(fan_in), 1/sqrt(fan_in)), so scores stay in the range real models produce.
  const init = (shape: number[], fanIn: number): Tensor =>
    randomTensor(rng, shape, (r) => (2 * r.uniform() - 1) / Math.sqrt(fanIn));
  const weights: Record<string, Tensor> = {
    W_query: init([E, dIn], dIn),
    W_key: init([Ekv, dIn], dIn),
    W_value: init([Ekv, dIn], dIn),
  };
  if (config.qkvBias)
    Object.assign(weights, { b_query: init([E], dIn), b_key: init([Ekv], dIn), b_value: init([Ekv], dIn) });
  if (config.outProj) weights["out_proj"] = init([E, E], E);
  if (config.outBias) weights["out_bias"] = init([E], E);
  const inputs: Record<string, Tensor> = { x: randomTensor(rng, [v.B, v.L, dIn]) };
  if (config.cross) inputs["kv"] = randomTensor(rng, [v.B, S, dIn]);
  if (v.pad) inputs["keyPaddingMask"] = Tensor.from(v.pad, [v.B, S]);
  return { config, weights, inputs };
}

/**
 * Elementwise: NaN where `want` is NaN, else within `tol` (NaN or ±∞ there included as a failure), naming the first
 * bad element as [row, column] of rows of `cols`.
 */
function expectCloseOrNaN(got: Tensor, want: ArrayLike<number>, cols: number, tol: Tolerance, label: string): void {
  const g = got.toFloat32Array();
  expect(g.length, `${label}: size`).toBe(want.length);
  const bad = Array.from(g).findIndex((x, i) => {
    const w = want[i]!;
    return Number.isNaN(w) ? !Number.isNaN(x) : !(Math.abs(x - w) <= tol.abs + tol.rel * Math.abs(w));
  });
  const where = bad < 0 ? "" : `[${Math.floor(bad / cols)}, ${bad % cols}]: got ${g[bad]}, expected ${want[bad]}`;
  expect(bad, `${label}: first bad element ${where}`).toBe(-1);
}

/**
 * Semantics: a key that a query cannot attend to (weight exactly 0: masked, padded, dropped) contributes nothing to that
 * query's context, not even a NaN or ±∞ of its value row (FlashAttention semantics; PyTorch's math path gives
 * 0 · NaN = NaN). Fused and unfused alike, whether a fused kernel skips the key's whole block or meets it inside one.
 */
function hiddenValueChecks(ctx: ContractContext): void {
  // L = S = 100 keys: with causal masking, key 70 is in a key block that query blocks of 64 rows either never visit
  // (queries 0..63) or visit with key 70 masked for some rows (64..69); key 20 is padded, visible by position to 20..99.
  const B = 1,
    H = 2,
    Hkv = 1,
    L = 100,
    S = 100,
    D = 8;
  const dims = { B, H, Hkv, L, S, D };
  const NAN_KEY = 70;
  const PAD_KEY = 20;
  const scale = 1 / Math.sqrt(D);
  const poisoned = (seed: number): { q: Tensor; k: Tensor; v: Tensor } => {
    const rng = createRng(seed);
    const q = randomTensor(rng, [B, H, L, D]);
    const k = randomTensor(rng, [B, Hkv, S, D]);
    const v = randomTensor(rng, [B, Hkv, S, D], (r, i) => {
      const key = Math.floor(i / D) % S;
      return key === NAN_KEY ? NaN : key === PAD_KEY ? Infinity : r.normal();
    });
    return { q, k, v };
  };
  const causalRowsFinite = (got: Tensor, label: string): void => {
    const g = got.toFloat32Array();
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++) {
        const row = g.subarray((h * L + i) * D, (h * L + i + 1) * D);
        if (i < NAN_KEY)
          expect(row.every(Number.isFinite), `${label}: head ${h}, query ${i} never sees key ${NAN_KEY}: finite`).toBe(
            true,
          );
        else
          expect(
            row.every(Number.isNaN),
            `${label}: head ${h}, query ${i} sees the NaN value of key ${NAN_KEY}: NaN`,
          ).toBe(true);
      }
  };

  it("a NaN value row hidden by the causal mask (and an ∞ one hidden by padding) leaves the queries that cannot see it finite: fused attention", async () => {
    const { q, k, v } = poisoned(700);
    const pad = Tensor.from(
      Array.from({ length: S }, (_, j) => (j === PAD_KEY ? 1 : 0)),
      [B, S],
    );
    const a = attrs.attention({ causal: true, scale });
    const got = await ctx.h.run("attention", a, [q, k, v, pad], [B, H, L, D]);
    causalRowsFinite(got, "attention");
    const w = softmax64(
      mask64(
        score64(f64(q), f64(k), dims),
        B,
        H,
        L,
        S,
        { causal: true, window: null, alignment: "top-left" },
        f64(pad),
      ),
      S,
      scale,
    );
    expectCloseOrNaN(got, weightedSum64(w, f64(v), dims), D, CHAIN_TOL, "attention against the reference");
  });

  it("a NaN value row weighed exactly 0 (causal zeros, a padded key's ∞) leaves the queries that cannot see it finite: weighted-sum", async () => {
    const { q, k, v } = poisoned(701);
    const pad = Float64Array.from({ length: S }, (_, j) => (j === PAD_KEY ? 1 : 0));
    const w64 = softmax64(
      mask64(score64(f64(q), f64(k), dims), B, H, L, S, { causal: true, window: null, alignment: "top-left" }, pad),
      S,
      scale,
    );
    const w = Tensor.from(Array.from(w64), [B, H, L, S]);
    const got = await ctx.h.run("weighted-sum", attrs.none(), [w, v], [B, H, L, D]);
    causalRowsFinite(got, "weighted-sum");
    expectCloseOrNaN(got, weightedSum64(f64(w), f64(v), dims), D, CHAIN_TOL, "weighted-sum against the reference");
  });

  it("a NaN value row of a dropped key does not reach the query that dropped it: fused attention with dropout", async () => {
    const L2 = 16,
      S2 = 16,
      seed = 77,
      rate = 0.5;
    const { d2, q, k, v } = nanValueRow(L2, S2, D, 702, 5);
    const a = attrs.attention({ scale, dropoutRate: rate, dropoutSeed: seed, training: true });
    const got = await ctx.h.run("attention", a, [q, k, v, undefined], [1, 1, L2, D]);
    const w = softmax64(score64(f64(q), f64(k), d2), S2, scale);
    const want = weightedSum64(Float64Array.from(referenceDropout(Float32Array.from(w), seed, rate)), f64(v), d2);
    const finiteRows = Array.from({ length: L2 }, (_, i) => Number.isFinite(want[i * D]!)).filter(Boolean).length;
    expect(finiteRows > 0 && finiteRows < L2, "the seed drops key 5 for some queries and keeps it for others").toBe(
      true,
    );
    expectCloseOrNaN(got, want, D, CHAIN_TOL, "attention with dropout against the reference");
  });

  it("a NaN value row past every query's causal reach, inside the last key block's padding columns, stays out: fused attention", async () => {
    // L 2, S 10, causal top-left: the block visits keys 0..1 only; a kernel whose tile runs over whole groups of 4 keys
    // also multiplies key 2 and 3 (weight 0) with their value rows.
    const L2 = 2,
      S2 = 10;
    const { d2, q, k, v } = nanValueRow(L2, S2, D, 703, 2);
    const a = attrs.attention({ causal: true, scale });
    const got = await ctx.h.run("attention", a, [q, k, v, undefined], [1, 1, L2, D]);
    expect(got.toFloat32Array().every(Number.isFinite), "no query sees key 2: every output finite").toBe(true);
    const w = softmax64(
      mask64(score64(f64(q), f64(k), d2), 1, 1, L2, S2, { causal: true, window: null, alignment: "top-left" }),
      S2,
      scale,
    );
    expectCloseOrNaN(got, weightedSum64(w, f64(v), d2), D, CHAIN_TOL, "attention against the reference");
  });
}

export function attentionChecks(ctx: ContractContext): void {
  hiddenValueChecks(ctx);
  variants.forEach((v, i) => {
    it(`attention from dispatch calls: ${v.label}`, async () => {
      const { config, weights, inputs } = randomCase(v, 600 + i);
      const got = await composeAttention(ctx.h, config, weights, inputs);
      const want = referenceAttention(config, weights, inputs);
      for (const name of Object.keys(want) as (keyof typeof want)[])
        expectClose(got[name], want[name], CHAIN_TOL, `${v.label}: ${name}`);
      if (v.pad) {
        // Rows whose every key is padded: weights exactly 0 (never NaN).
        const S = v.S ?? v.L;
        const w = got.weights.toFloat32Array();
        for (let b = 0; b < v.B; b++) {
          if (!v.pad.slice(b * S, b * S + S).every((p) => p === 1)) continue;
          const rows = w.subarray(b * config.numHeads * v.L * S, (b + 1) * config.numHeads * v.L * S);
          expect(
            rows.every((x) => x === 0),
            `weights of fully padded batch entry ${b}`,
          ).toBe(true);
        }
      }
    });
  });

  it("attention from dispatch calls matches the expected tensors of every golden case", async () => {
    // Imported here, not at the top: it reads files (node:fs), and the rest of the suite must load without Node.
    const { goldenDir, listCases, loadCase } = await import("../golden/load.js");
    const files = listCases(goldenDir);
    expect(files.map((f) => f.slice(goldenDir.length + 1))).toContain("mha-causal-outproj-b2-t6-d8-h2.json");
    const failures: string[] = [];
    for (const file of files) {
      const c = loadCase(file);
      const got = await composeAttention(ctx.h, c.config, c.weights, c.inputs);
      for (const [name, want] of Object.entries(c.expected)) {
        try {
          expectClose(
            got[name as keyof typeof got],
            { shape: want.shape, data: want.toFloat32Array() },
            c.tolerance,
            `${c.name}: ${name}`,
          );
        } catch (e) {
          failures.push((e as Error).message.split("\n")[0]!);
        }
      }
    }
    expect(failures, "golden tensors that the composed attention misses").toEqual([]);
  });
}

/** One head's q [1, 1, L, D], k and v [1, 1, S, D] drawn from `seed`, with value row `nanKey` all NaN. */
function nanValueRow(L: number, S: number, D: number, seed: number, nanKey: number) {
  const rng = createRng(seed);
  return {
    d2: { B: 1, H: 1, Hkv: 1, L, S, D },
    q: randomTensor(rng, [1, 1, L, D]),
    k: randomTensor(rng, [1, 1, S, D]),
    v: randomTensor(rng, [1, 1, S, D], (r, i) => (Math.floor(i / D) === nanKey ? NaN : r.normal())),
  };
}
