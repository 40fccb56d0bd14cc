// A whole attention block composed from dispatch calls (compose.ts), against the float64 reference on seeded random
// variants (GQA, MQA, cross, padding, window, scale, no output projection) and against the expected tensors of the
// golden cases. The golden part reads files, so it needs Node.
import { expect, it } from "vitest";
import { Tensor, type Tolerance } from "@attngraph/tensor";
import { normalizeConfig, type AttentionConfig, type AttentionConfigInput } from "@attngraph/attention";
import { referenceAttention } from "../reference/attention64.js";
import { composeAttention } from "./compose.js";
import type { ContractContext } from "./context.js";
import { expectClose } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";

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
  { label: "GQA H=4/Hkv=2, causal, qkv bias, dIn != dOut", config: { dIn: 6, dOut: 16, numHeads: 4, numKvHeads: 2, causal: true, qkvBias: true }, B: 2, L: 5 },
  { label: "MQA H=4/Hkv=1, cross, key padding", config: { dIn: 8, dOut: 8, numHeads: 4, numKvHeads: 1, cross: true }, B: 2, L: 3, S: 6, pad: [0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1] },
  { label: "window 2, scale 0.3, no output projection", config: { dIn: 5, dOut: 6, numHeads: 2, causal: true, window: 2, scale: 0.3, outProj: false }, B: 1, L: 6 },
  { label: "a fully padded batch entry", config: { dIn: 4, dOut: 8, numHeads: 2 }, B: 2, L: 3, pad: [0, 1, 0, 1, 1, 1] },
];

function randomCase(v: Variant, seed: number): { config: AttentionConfig; weights: Record<string, Tensor>; inputs: Record<string, Tensor> } {
  const config = normalizeConfig(v.config);
  const rng = createRng(seed);
  const { dIn, dOut: E } = config;
  const Ekv = config.numKvHeads * (E / config.numHeads);
  const S = v.S ?? v.L;
  // nn.Linear's init range U(-1/sqrt(fan_in), 1/sqrt(fan_in)), so scores stay in the range real models produce.
  const init = (shape: number[], fanIn: number): Tensor => randomTensor(rng, shape, (r) => (2 * r.uniform() - 1) / Math.sqrt(fanIn));
  const weights: Record<string, Tensor> = { W_query: init([E, dIn], dIn), W_key: init([Ekv, dIn], dIn), W_value: init([Ekv, dIn], dIn) };
  if (config.qkvBias) Object.assign(weights, { b_query: init([E], dIn), b_key: init([Ekv], dIn), b_value: init([Ekv], dIn) });
  if (config.outProj) weights["out_proj"] = init([E, E], E);
  if (config.outBias) weights["out_bias"] = init([E], E);
  const inputs: Record<string, Tensor> = { x: randomTensor(rng, [v.B, v.L, dIn]) };
  if (config.cross) inputs["kv"] = randomTensor(rng, [v.B, S, dIn]);
  if (v.pad) inputs["keyPaddingMask"] = Tensor.from(v.pad, [v.B, S]);
  return { config, weights, inputs };
}

export function attentionChecks(ctx: ContractContext): void {
  variants.forEach((v, i) => {
    it(`attention from dispatch calls: ${v.label}`, async () => {
      const { config, weights, inputs } = randomCase(v, 600 + i);
      const got = await composeAttention(ctx.h, config, weights, inputs);
      const want = referenceAttention(config, weights, inputs);
      for (const name of Object.keys(want) as (keyof typeof want)[]) expectClose(got[name], want[name], CHAIN_TOL, `${v.label}: ${name}`);
      if (v.pad) {
        // Rows whose every key is padded: weights exactly 0 (never NaN).
        const S = v.S ?? v.L;
        const w = got.weights.toFloat32Array();
        for (let b = 0; b < v.B; b++) {
          if (!v.pad.slice(b * S, b * S + S).every((p) => p === 1)) continue;
          const rows = w.subarray(b * config.numHeads * v.L * S, (b + 1) * config.numHeads * v.L * S);
          expect(rows.every((x) => x === 0), `weights of fully padded batch entry ${b}`).toBe(true);
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
          expectClose(got[name as keyof typeof got], { shape: want.shape, data: want.toFloat32Array() }, c.tolerance, `${c.name}: ${name}`);
        } catch (e) {
          failures.push((e as Error).message.split("\n")[0]!);
        }
      }
    }
    expect(failures, "golden tensors that the composed attention misses").toEqual([]);
  });
}
