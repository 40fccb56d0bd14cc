// Activation patching on every executor: zero-ablating a head through an override of `weights` gives the float64
// reference computed without that head; patching with the node's own value changes nothing, bit for bit; a tap on the
// patched node sees the patched value in the same run. And the trust probes of issue 26: an object shaped like a tensor,
// NaN the data carries, an override that never settles, concurrent runWithCache calls, ablation without a heads axis.
import { attentionWeights, buildAttention, normalizeConfig } from "@attngraph/attention";
import type { Executor } from "@attngraph/graph";
import { compile, OverrideError, type Session } from "@attngraph/runtime";
import { ablateHeads, runWithCache } from "@attngraph/tools";
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
  for (let b = 0; b < B; b++) data.fill(0, (b * H + h) * T * T, (b * H + h + 1) * T * T);
  return new Tensor(data, w.shape);
}

/** The float64 output with head `h` contributing nothing: its weights zeroed before the weighted sum. */
function referenceWithout(h: number): Float64Array {
  const ref = referenceAttention(config, raw, { x });
  const w = Float64Array.from(ref.weights.data);
  for (let b = 0; b < B; b++) w.fill(0, (b * H + h) * T * T, (b * H + h + 1) * T * T);
  const dims = { B, H, Hkv: H, L: T, S: T, D };
  const context = mergeHeads64(
    weightedSum64(w, splitHeads64(Float64Array.from(ref.values.data), B, T, H, D), dims),
    B,
    H,
    T,
    D,
  );
  return linear64(
    context,
    12,
    Float64Array.from(raw.out_proj.toFloat32Array()),
    12,
    Float64Array.from(raw.out_bias.toFloat32Array()),
  );
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: activation patching", (_name, entry) => {
  /** The attention graph compiled on a new executor of this entry, handed to `body`, and disposed after it. */
  async function withSession(body: (s: Session, executor: Executor) => Promise<void>): Promise<void> {
    const executor = await entry.create();
    const s = await compile(buildAttention(config), { executors: [executor], weights: attentionWeights(config, raw) });
    try {
      await body(s, executor);
    } finally {
      await s.dispose();
    }
  }

  it("zero-ablating a head equals the float64 reference without it; a tap in the same run sees the ablated weights", () =>
    withSession(async (s) => {
      const seen: Tensor[] = [];
      const sub = s.tap("weights").subscribe((e) => seen.push(e.tensor));
      const out = (await s.run({ x }, { override: { weights: (w) => withoutHead(w, ABLATED) } })).output!;
      sub.unsubscribe();
      const want = { shape: [B, T, 12], data: referenceWithout(ABLATED) };
      const p = mismatch("output with head 1 ablated", dense(out), want, { abs: 10 * TOL, rel: 10 * TOL });
      expect(p).toBeUndefined();
      const w = seen[0]!.toFloat32Array();
      for (let b = 0; b < B; b++) {
        expect(
          w.subarray((b * H + ABLATED) * T * T, (b * H + ABLATED + 1) * T * T).every((v) => v === 0),
          `tapped head ${ABLATED}, batch ${b}`,
        ).toBe(true);
        expect(
          w.subarray(b * H * T * T, (b * H + 1) * T * T).some((v) => v !== 0),
          `tapped head 0, batch ${b}`,
        ).toBe(true);
      }
    }));

  it("patching `weights` with its own value changes nothing, bit for bit (against the same, unfused lowering)", () =>
    withSession(async (s) => {
      const sub = s.tap("weights").subscribe();
      const plain = (await s.run({ x })).output!;
      sub.unsubscribe();
      const same = (await s.run({ x }, { override: { weights: (w) => w } })).output!;
      expect(Array.from(same.toFloat32Array())).toEqual(Array.from(plain.toFloat32Array()));
    }));

  it("an object shaped like a tensor is an OverrideError, never a wrong output, a NaN or an untyped TypeError", () =>
    withSession(async (s) => {
      const real = Tensor.zeros([B, H, T, T]);
      const duck = {
        shape: real.shape,
        dtype: "float32",
        data: real.data,
        strides: real.strides,
        offset: 0,
        toFloat32Array: () => real.toFloat32Array(),
        copyInto: () => undefined,
      };
      for (const override of [duck, () => duck]) {
        const e = await s.run({ x }, { override: { weights: override as never } }).catch((err: unknown) => err);
        expect(e).toBeInstanceOf(OverrideError);
        expect((e as OverrideError).node).toBe("weights");
      }
      expect((await s.run({ x })).output!.shape).toEqual([B, T, 12]);
    }));

  it("NaN the input carries passes an identity override and an ablation; NaN the override adds is refused", () =>
    withSession(async (s) => {
      const poisoned = new Tensor(
        x.toFloat32Array().map((v, i) => (i === 0 ? NaN : v)),
        x.shape,
      ); // batch 0, token 0
      const plain = (await s.run({ x: poisoned }, { tap: { nodes: "weights", next: () => undefined } })).output!;
      const same = (await s.run({ x: poisoned }, { override: { weights: (w) => w } })).output!;
      expect(Array.from(same.toFloat32Array())).toEqual(Array.from(plain.toFloat32Array()));
      const remove = ablateHeads(s, "weights", [ABLATED]);
      const ablated = (await s.run({ x: poisoned })).output!.toFloat32Array();
      remove();
      expect(Number.isNaN(ablated[0]!)).toBe(true); // the data's NaN, still there
      expect(Number.isFinite(ablated[T * 12]!)).toBe(true); // batch 1 never saw it
      await expect(
        s.run(
          { x },
          {
            override: {
              weights: (w) =>
                new Tensor(
                  w.toFloat32Array().map((v, i) => (i === 5 ? NaN : v)),
                  w.shape,
                ),
            },
          },
        ),
      ).rejects.toThrow(OverrideError);
    }));

  it("an override that never settles: AbortSignal.timeout settles the run, which releases what it held", () =>
    withSession(async (s, executor) => {
      // The baseline is after a run of the same plan: its weights' uploads and its pooled arena stay with the session.
      await s.run({ x }, { override: { weights: (w) => w } });
      const live = entry.live?.read(executor);
      const e = await s
        .run(
          { x },
          { override: { weights: () => new Promise<Tensor>(() => undefined) }, signal: AbortSignal.timeout(200) },
        )
        .catch((err: unknown) => err);
      expect((e as Error).name).toBe("AbortError");
      if (entry.live) expect(entry.live.read(executor), entry.live.unit).toBe(live);
      expect((await s.run({ x })).output!.shape).toEqual([B, T, 12]);
    }));

  it("runWithCache calls in flight together each read their own run (T = 3 and T = 5, then 20 at once)", () =>
    withSession(async (s) => {
      const input = (t: number, seed: number) => new Tensor(uniform(t * 8, 1, prng(seed)), [1, t, 8]);
      const [three, five] = await Promise.all([
        runWithCache(s, { x: input(3, 1) }, ["context"]),
        runWithCache(s, { x: input(5, 2) }, ["context"]),
      ]);
      expect(three.cache.get("context")!.shape).toEqual([1, 3, 12]);
      expect(five.cache.get("context")!.shape).toEqual([1, 5, 12]);
      const inputs = Array.from({ length: 20 }, (_, i) => input(1 + (i % 6), 10 + i));
      const alone: number[][] = [];
      for (const xi of inputs)
        alone.push((await runWithCache(s, { x: xi }, ["context"])).cache.get("context")!.toArray());
      const together = await Promise.all(inputs.map((xi) => runWithCache(s, { x: xi }, ["context"])));
      together.forEach((r, i) => expect(r.cache.get("context")!.toArray(), `call ${i}`).toEqual(alone[i]));
    }));

  it("ablateHeads on a value without heads ([B, T, E]) is refused, not read with T as heads", () =>
    withSession(async (s) => {
      expect(() => ablateHeads(s, "output", [0])).toThrow(/ablateHeads output: the value has no heads axis/);
      expect(() => ablateHeads(s, "context", [0])).toThrow(/no heads axis/);
    }));
});
