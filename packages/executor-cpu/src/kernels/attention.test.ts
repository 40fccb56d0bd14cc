// The fused attention kernel against the unfused chain score → mask → softmax → dropout → weighted-sum, dispatched
// through the same CPU executor on seeded random data. Sizes cross the kernel's 64-row/64-key blocks on purpose.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, compare, type Shape } from "@attngraph/tensor";
import type { AttentionAttrs } from "@attngraph/graph";
import { randomTensor, type HeadDims } from "@attngraph/testkit";
import { createCpuExecutor } from "../register-kernels.js";
import { heads } from "../test-heads.js";

const ex = createCpuExecutor();

const attrsOf = (a: Partial<AttentionAttrs>): AttentionAttrs => ({
  causal: false,
  window: null,
  alignment: "top-left",
  scale: 0.25,
  dropoutRate: 0,
  dropoutSeed: 0,
  training: false,
  ...a,
});

function fused(q: Tensor, k: Tensor, v: Tensor, pad: Tensor | undefined, attrs: AttentionAttrs, out?: Tensor): Tensor {
  const outShape = [q.shape[0]!, q.shape[1]!, q.shape[2]!, v.shape[3]!];
  return ex.dispatch({
    kind: "attention",
    node: "context.heads",
    attrs: { ...attrs },
    inputs: [q, k, v, pad],
    outShape,
    ...(out ? { out } : {}),
  });
}

/** The same attention as five dispatches; returns the weights too. */
function chain(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  pad: Tensor | undefined,
  a: AttentionAttrs,
): { context: Tensor; weights: Tensor } {
  const [B, H, L] = q.shape as [number, number, number];
  const S = k.shape[2]!;
  const ws: Shape = [B, H, L, S];
  const call = (
    kind: string,
    node: string,
    inputs: (Tensor | undefined)[],
    attrs: Record<string, unknown>,
    outShape: Shape,
  ) => ex.dispatch({ kind, node, attrs, inputs, outShape });
  const scores = call("score", "scores", [q, k], {}, ws);
  const masked = call(
    "mask",
    "masked",
    [scores, pad],
    { causal: a.causal, window: a.window, alignment: a.alignment },
    ws,
  );
  const probs = call("softmax", "probs", [masked], { scale: a.scale }, ws);
  const weights = call(
    "dropout",
    "weights",
    [probs],
    { rate: a.dropoutRate, seed: a.dropoutSeed, training: a.training },
    ws,
  );
  const context = call("weighted-sum", "context.heads", [weights, v], {}, [B, H, L, v.shape[3]!]);
  return { context, weights };
}

/** Fused vs chain within 1e-5 relative (plus 1e-6 absolute for entries that cancel to about 0). */
function expectSame(got: Tensor, want: Tensor): void {
  const r = compare(got, want, { abs: 1e-6, rel: 1e-5 });
  expect(r).toMatchObject({ ok: true });
}

interface Case extends HeadDims {
  readonly label: string;
  /** Value head dim, default D. */
  readonly Dv?: number;
  readonly attrs: Partial<AttentionAttrs>;
  readonly pad?: (B: number, S: number) => Tensor;
}

/** Pads the last `n` keys of batch 0 and the first key of every other batch. */
const padTail = (n: number) => (B: number, S: number) =>
  Tensor.from(
    Array.from({ length: B * S }, (_, i) => ((i < S && i >= S - n) || (i >= S && i % S === 0) ? 1 : 0)),
    [B, S],
  );

const cases: Case[] = [
  { label: "no mask, L = S across blocks", B: 2, H: 2, Hkv: 2, L: 130, S: 130, D: 16, attrs: {} },
  { label: "causal top-left, L = S", B: 1, H: 3, Hkv: 3, L: 150, S: 150, D: 8, attrs: { causal: true } },
  { label: "causal top-left, L < S", B: 1, H: 2, Hkv: 2, L: 70, S: 200, D: 12, attrs: { causal: true } },
  { label: "causal top-left, L > S", B: 1, H: 2, Hkv: 2, L: 200, S: 70, D: 12, attrs: { causal: true } },
  {
    label: "causal bottom-right, L < S",
    B: 2,
    H: 2,
    Hkv: 2,
    L: 37,
    S: 150,
    D: 16,
    attrs: { causal: true, alignment: "bottom-right" },
  },
  {
    label: "causal bottom-right, L > S (first rows see nothing)",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 150,
    S: 37,
    D: 16,
    attrs: { causal: true, alignment: "bottom-right" },
  },
  { label: "window 5, top-left", B: 1, H: 2, Hkv: 2, L: 140, S: 140, D: 8, attrs: { causal: true, window: 5 } },
  {
    label: "window 70, bottom-right, L < S",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 90,
    S: 200,
    D: 8,
    attrs: { causal: true, window: 70, alignment: "bottom-right" },
  },
  { label: "key padding, no causal", B: 3, H: 2, Hkv: 2, L: 20, S: 75, D: 8, attrs: {}, pad: padTail(10) },
  {
    label: "key padding + causal: row 0 of batches 1, 2 sees only a padded key",
    B: 3,
    H: 2,
    Hkv: 2,
    L: 80,
    S: 80,
    D: 8,
    attrs: { causal: true },
    pad: padTail(3),
  },
  { label: "GQA H = 4, Hkv = 2, causal", B: 2, H: 4, Hkv: 2, L: 70, S: 70, D: 8, attrs: { causal: true } },
  {
    label: "MQA H = 4, Hkv = 1, window",
    B: 1,
    H: 4,
    Hkv: 1,
    L: 100,
    S: 100,
    D: 8,
    attrs: { causal: true, window: 17 },
  },
  {
    label: "dropout in training, causal",
    B: 2,
    H: 2,
    Hkv: 2,
    L: 90,
    S: 90,
    D: 16,
    attrs: { causal: true, dropoutRate: 0.3, dropoutSeed: 7, training: true },
  },
  {
    label: "dropout in training, GQA + padding",
    B: 2,
    H: 4,
    Hkv: 1,
    L: 30,
    S: 66,
    D: 8,
    attrs: { dropoutRate: 0.5, dropoutSeed: 4294967295, training: true },
    pad: padTail(5),
  },
  {
    label: "dropout attributes in eval mode change nothing",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 40,
    S: 40,
    D: 8,
    attrs: { causal: true, dropoutRate: 0.5, dropoutSeed: 3, training: false },
  },
  {
    label: "head dim 1, odd sizes",
    B: 1,
    H: 1,
    Hkv: 1,
    L: 5,
    S: 3,
    D: 1,
    attrs: { causal: true, alignment: "bottom-right" },
  },
  { label: "value head dim Dv = 6 ≠ D = 8", B: 1, H: 2, Hkv: 1, L: 66, S: 67, D: 8, Dv: 6, attrs: { causal: true } },
];

describe("fused attention kernel equals the unfused chain", () => {
  it.each(cases)("$label", ({ B, H, Hkv, L, S, D, Dv = D, attrs, pad }) => {
    const q = heads(B, H, L, D, 1, 2);
    const k = heads(B, Hkv, S, D, 2, 2);
    const v = heads(B, Hkv, S, Dv, 3);
    const p = pad?.(B, S);
    const a = attrsOf(attrs);
    const got = fused(q, k, v, p, a);
    const want = chain(q, k, v, p, a).context;
    expect(got.shape).toEqual([B, H, L, Dv]);
    expect(got.toArray().some(Number.isNaN)).toBe(false);
    expectSame(got, want);
  });

  it("gives exact zeros for rows with every key masked (never NaN)", () => {
    // Batch 1 pads every key; bottom-right with L > S hides every key from the first L − S rows of batch 0.
    const [B, H, L, S, D] = [2, 2, 9, 4, 3];
    const pad = Tensor.from([0, 0, 0, 0, 1, 1, 1, 1], [B, S]);
    const out = fused(
      heads(B, H, L, D, 4),
      heads(B, H, S, D, 5),
      heads(B, H, S, D, 6),
      pad,
      attrsOf({ causal: true, alignment: "bottom-right" }),
    );
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < L; i++) {
        for (let d = 0; d < D; d++) {
          if (i < L - S) expect(out.get(0, h, i, d)).toBe(0);
          else expect(out.get(0, h, i, d)).not.toBe(0);
          expect(out.get(1, h, i, d)).toBe(0);
        }
      }
    }
  });

  it("drops exactly the weights the dropout kernel drops (V = identity exposes every weight)", () => {
    // With v[s] = e_s (S = Dv), context row i is weights row i: dropped weights are exact zeros in both.
    const [B, H, L, S] = [2, 3, 70, 70];
    const eye = new Float32Array(B * H * S * S);
    for (let bh = 0; bh < B * H; bh++) for (let s = 0; s < S; s++) eye[(bh * S + s) * S + s] = 1;
    const v = new Tensor(eye, [B, H, S, S]);
    const q = heads(B, H, L, 8, 7);
    const k = heads(B, H, S, 8, 8);
    const a = attrsOf({ causal: true, dropoutRate: 0.4, dropoutSeed: 42, training: true });
    const got = fused(q, k, v, undefined, a);
    const { weights } = chain(q, k, v, undefined, a);
    const g = got.toArray();
    const w = weights.toArray();
    let dropped = 0;
    for (let i = 0; i < w.length; i++) {
      expect(g[i] === 0).toBe(w[i] === 0);
      const row = Math.floor(i / S) % L;
      if (w[i] === 0 && i % S <= row) dropped++; // visible but dropped
    }
    expect(dropped).toBeGreaterThan(500); // about 40% of the ~7,500 visible weights
    expectSame(got, weights);
  });

  it("never reads key blocks that causal masking hides from a whole query block", () => {
    // A NaN in the value of the last key reaches only the query block that contains that key.
    const [B, H, L, D] = [1, 1, 256, 4];
    const v = heads(B, H, L, D, 9);
    const data = v.contiguous().data.slice();
    data[(L - 1) * D] = NaN;
    const out = fused(
      heads(B, H, L, D, 10),
      heads(B, H, L, D, 11),
      new Tensor(data, [B, H, L, D]),
      undefined,
      attrsOf({ causal: true }),
    );
    for (let i = 0; i < L - 64; i++) expect(Number.isNaN(out.get(0, 0, i, 0))).toBe(false);
    expect(Number.isNaN(out.get(0, 0, L - 1, 0))).toBe(true);
  });

  it("never reads key blocks that a sliding window hides from a whole query block", () => {
    // Window 5: only rows 0..4 see key 0; from the second query block on, key 0's block is skipped altogether.
    const [B, H, L, D] = [1, 1, 256, 4];
    const data = heads(B, H, L, D, 30).contiguous().data.slice();
    data[0] = NaN;
    const out = fused(
      heads(B, H, L, D, 31),
      heads(B, H, L, D, 32),
      new Tensor(data, [B, H, L, D]),
      undefined,
      attrsOf({ causal: true, window: 5 }),
    );
    expect(Number.isNaN(out.get(0, 0, 0, 0))).toBe(true);
    for (let i = 64; i < L; i++) expect(Number.isNaN(out.get(0, 0, i, 0))).toBe(false);
  });

  it("a padded key with a huge score changes nothing (it never enters the running max)", () => {
    const [B, H, L, S, D] = [1, 1, 3, 5, 2];
    const q = Tensor.from(new Array(L * D).fill(1), [B, H, L, D]);
    const k = randomTensor([B, H, S, D], 33).contiguous();
    const kd = k.data.slice();
    kd[2 * D] = 1e4; // key 2: score 1e4 against every query
    kd[2 * D + 1] = 1e4;
    const pad = Tensor.from([0, 0, 1, 0, 0], [B, S]);
    const kk = new Tensor(kd, [B, H, S, D]);
    const v = randomTensor([B, H, S, D], 34);
    const got = fused(q, kk, v, pad, attrsOf({ scale: 1 }));
    expectSame(got, chain(q, kk, v, pad, attrsOf({ scale: 1 })).context);
    expect(got.toArray().every((x) => x !== 0)).toBe(true);
  });

  it("no keys at all (S = 0) gives zeros", () => {
    const out = fused(
      heads(1, 2, 3, 4, 12),
      randomTensor([1, 2, 0, 4], 13),
      randomTensor([1, 2, 0, 4], 14),
      undefined,
      attrsOf({}),
    );
    expect(out.toArray()).toEqual(new Array(24).fill(0));
  });

  it("a NaN in q makes that row NaN, as the chain does", () => {
    const q = randomTensor([1, 1, 3, 2], 15);
    const qd = q.data.slice();
    qd[2] = NaN; // row 1
    const qn = new Tensor(qd, [1, 1, 3, 2]);
    const k = randomTensor([1, 1, 4, 2], 16);
    const v = randomTensor([1, 1, 4, 2], 17);
    const got = fused(qn, k, v, undefined, attrsOf({}));
    const want = chain(qn, k, v, undefined, attrsOf({})).context;
    expect(got.toArray().map(Number.isNaN)).toEqual([false, false, true, true, false, false]);
    expect(compare(got, want, { abs: 1e-6, rel: 1e-5 }, { equalNan: true }).ok).toBe(true);
  });
});

describe("attention kernel: out and errors", () => {
  it("writes into call.out and returns it, ignoring its garbage", () => {
    const q = heads(1, 2, 70, 8, 18);
    const k = heads(1, 2, 70, 8, 19);
    const v = heads(1, 2, 70, 8, 20);
    const a = attrsOf({ causal: true });
    const out = new Tensor(new Float32Array(2 * 70 * 8).fill(NaN), [1, 2, 70, 8]);
    const got = fused(q, k, v, undefined, a, out);
    expect(got).toBe(out);
    expect(got.toArray()).toEqual(fused(q, k, v, undefined, a).toArray());
  });

  it("rejects padding values other than 0 and 1 with the mask kernel's typed error", () => {
    const pad = Tensor.from([0, 2, 0, 0], [1, 4]);
    let err: unknown;
    try {
      fused(
        randomTensor([1, 1, 2, 2], 21),
        randomTensor([1, 1, 4, 2], 22),
        randomTensor([1, 1, 4, 2], 23),
        pad,
        attrsOf({}),
      );
    } catch (e) {
      err = e;
    }
    expect(AttnGraphError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({
      code: "input",
      subject: "context.heads.keyPaddingMask",
      expected: "0 or 1",
      got: "2 at [0, 1]",
    });
  });

  it("checks attributes and shapes, naming node and field", () => {
    const q = randomTensor([1, 4, 2, 2], 24);
    const kv = randomTensor([1, 2, 3, 2], 25);
    expect(() => fused(q, kv, kv, undefined, attrsOf({ window: 2 }))).toThrow(/context\.heads\.window/);
    expect(() => fused(q, kv, kv, undefined, attrsOf({ dropoutRate: 1, training: true }))).toThrow(
      /context\.heads\.dropoutRate/,
    );
    expect(() => fused(q, kv, kv, undefined, attrsOf({ scale: NaN }))).toThrow(/context\.heads\.scale/);
    expect(() =>
      fused(q, randomTensor([1, 3, 3, 2], 26), randomTensor([1, 3, 3, 2], 26), undefined, attrsOf({})),
    ).toThrow(/context\.heads\.k/);
    expect(() => fused(q, kv, randomTensor([1, 2, 4, 2], 27), undefined, attrsOf({}))).toThrow(/context\.heads\.v/);
  });

  it("treats absent dropout attributes as no dropout", () => {
    const q = randomTensor([1, 1, 3, 2], 28);
    const kv = randomTensor([1, 1, 3, 2], 29);
    const got = ex.dispatch({
      kind: "attention",
      node: "a",
      attrs: { causal: true, alignment: "top-left", scale: 1 },
      inputs: [q, kv, kv],
      outShape: [1, 1, 3, 2],
    });
    expect(got.toArray()).toEqual(fused(q, kv, kv, undefined, attrsOf({ causal: true, scale: 1 })).toArray());
  });
});
