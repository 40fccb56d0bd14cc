// Activation patching on every executor: zero-ablating a head through an override of `weights` gives the float64
// reference computed without that head; patching with the node's own value changes nothing, bit for bit; a tap on the
// patched node sees the patched value in the same run.
import { attentionWeights, buildAttention, normalizeConfig } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { linear64, mergeHeads64, referenceAttention, splitHeads64, weightedSum64 } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { dense, mismatch, TOL } from "./check.js";
import { executors } from "./executors.js";
import { prng, uniform } from "./prng.js";

const config = normalizeConfig({ dIn: 8, dOut: 12, numHeads: 3, causal: true, outProj: true, outBias: true });
const [B, T, H, D] = [2, 5, 3, 4];
const next = prng(77);
const raw = {
  W_query: new Tensor(uniform(12 * 8, 0.35, next), [12, 8]),
  W_key: new Tensor(uniform(12 * 8, 0.35, next), [12, 8]),
  W_value: new Tensor(uniform(12 * 8, 0.35, next), [12, 8]),
  out_proj: new Tensor(uniform(12 * 12, 0.29, next), [12, 12]),
  out_bias: new Tensor(uniform(12, 0.5, next), [12]),
};
const x = new Tensor(uniform(B * T * 8, 1, next), [B, T, 8]);
const ABLATED = 1;

/** weights [B, H, T, T] with head `h` zeroed in every batch entry. */
function withoutHead(w: Tensor, h: number): Tensor {
  const data = w.toFloat32Array().slice();
  for (let b = 0; b < B; b++) data.fill(0, ((b * H + h) * T) * T, ((b * H + h + 1) * T) * T);
  return new Tensor(data, w.shape);
}

/** The float64 output with head `h` contributing nothing: its weights zeroed before the weighted sum. */
function referenceWithout(h: number): Float64Array {
  const ref = referenceAttention(config, raw, { x });
  const w = Float64Array.from(ref.weights.data);
  for (let b = 0; b < B; b++) w.fill(0, ((b * H + h) * T) * T, ((b * H + h + 1) * T) * T);
  const dims = { B, H, Hkv: H, L: T, S: T, D };
  const context = mergeHeads64(weightedSum64(w, splitHeads64(Float64Array.from(ref.values.data), B, T, H, D), dims), B, H, T, D);
  return linear64(context, 12, Float64Array.from(raw.out_proj.toFloat32Array()), 12, Float64Array.from(raw.out_bias.toFloat32Array()));
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: activation patching", (_name, entry) => {
  it("zero-ablating a head equals the float64 reference without it; a tap in the same run sees the ablated weights", async () => {
    const s = await compile(buildAttention(config), { executors: [await entry.create()], weights: attentionWeights(config, raw) });
    try {
      const seen: Tensor[] = [];
      const sub = s.tap("weights").subscribe((e) => seen.push(e.tensor));
      const out = (await s.run({ x }, { override: { weights: (w) => withoutHead(w, ABLATED) } })).output!;
      sub.unsubscribe();
      const want = { shape: [B, T, 12], data: referenceWithout(ABLATED) };
      const p = mismatch("output with head 1 ablated", dense(out), want, { abs: 10 * TOL, rel: 10 * TOL });
      expect(p).toBeUndefined();
      const w = seen[0]!.toFloat32Array();
      for (let b = 0; b < B; b++) {
        expect(w.subarray(((b * H + ABLATED) * T) * T, ((b * H + ABLATED + 1) * T) * T).every((v) => v === 0), `tapped head ${ABLATED}, batch ${b}`).toBe(true);
        expect(w.subarray(((b * H) * T) * T, ((b * H + 1) * T) * T).some((v) => v !== 0), `tapped head 0, batch ${b}`).toBe(true);
      }
    } finally {
      await s.dispose();
    }
  });

  it("patching `weights` with its own value changes nothing, bit for bit (against the same, unfused lowering)", async () => {
    const s = await compile(buildAttention(config), { executors: [await entry.create()], weights: attentionWeights(config, raw) });
    try {
      const sub = s.tap("weights").subscribe();
      const plain = (await s.run({ x })).output!;
      sub.unsubscribe();
      const same = (await s.run({ x }, { override: { weights: (w) => w } })).output!;
      expect(Array.from(same.toFloat32Array())).toEqual(Array.from(plain.toFloat32Array()));
    } finally {
      await s.dispose();
    }
  });
});
