// attention-lse and attention-grad on wasm against the testkit's float64 references of the unfused chain, on shapes
// the contract suite's small cases do not reach: many 64-row query blocks and 64-key blocks, with every mask, GQA and
// MQA, L != S, D != Dv (and neither a multiple of 8), dropout; transposed inputs and inputs strided along their last
// axis (copied first); rows that see no key (lse −∞, dq exactly 0) and keys no query sees (dk, dv exactly 0); NaN and
// ±∞ where no weight reaches them; chunked calls bit for bit the unchunked ones (the params block's layout: attention-params.test.ts).
import { describe, expect, it } from "vitest";
import type { KernelCall } from "@attngraph/graph";
import { Tensor, type AnyTensor, type Shape } from "@attngraph/tensor";
import {
  attentionGrad64,
  attentionGradInputs,
  attentionGradTensors,
  attentionLse64,
  gradsByWrt,
  type AttentionGradCase,
  type AttentionGradTensors,
  type QkvWrt,
} from "@attngraph/testkit";
import { f64, onWasm, onWasmViews, random, uploadView, wasmExecutor, worst } from "../test-util.js";
import { runHostCall } from "../test-host-call.js";
import type { WasmExecutor } from "../executor.js";
import type { WasmValue } from "../value.js";

const ex = await wasmExecutor();

interface Case extends AttentionGradCase {
  readonly label: string;
}

interface Made extends AttentionGradTensors {
  readonly c: Case;
}

function make(c: Case, seed: number, edit?: (name: "q" | "k" | "v" | "grad", data: Float32Array) => void): Made {
  const q = random([c.B, c.H, c.L, c.D], seed, 1.5);
  const k = random([c.B, c.Hkv, c.S, c.D], seed + 1, 1.5);
  const v = random([c.B, c.Hkv, c.S, c.Dv], seed + 2);
  const grad = random([c.B, c.H, c.L, c.Dv], seed + 3);
  if (edit)
    for (const [name, t] of [
      ["q", q],
      ["k", k],
      ["v", v],
      ["grad", grad],
    ] as const)
      edit(name, t.data as Float32Array);
  return { ...attentionGradTensors(c, { q, k, v, grad }), c };
}

const inputs = (m: Made, over: Partial<Record<"q" | "k" | "v" | "out" | "grad" | "lse", AnyTensor>> = {}) =>
  attentionGradInputs<AnyTensor>(m, over);
const runGrad = (m: Made, wrt: QkvWrt, views = false, over = {}) =>
  (views ? onWasmViews : onWasm)(ex, "attention-grad", { ...m.attrs(wrt) }, inputs(m, over), m.shapeOf(wrt));
const runLse = (m: Made, q: AnyTensor = m.q, k: AnyTensor = m.k, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "attention-lse", { ...m.lseAttrs }, [q, k, m.pad], [m.c.B, m.c.H, m.c.L]);

/** Float32 products over up to 260 keys and sums over up to 520 rows, against float64. */
const ABS = 5e-5;
const REL = 5e-4;

function expectNear(got: Tensor, want: Float64Array, label: string): void {
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), ABS, REL), label).toBeLessThan(1);
}

function expectAll(m: Made, label: string): void {
  const lse = runLse(m);
  const wantLse = attentionLse64(m.problem);
  const got = lse.toFloat32Array();
  wantLse.forEach((w, r) => {
    if (w === -Infinity) expect(got[r], `${label}: lse row ${r} sees no key`).toBe(-Infinity);
  });
  expectNear(lse, wantLse, `${label}: lse`);
  const want = attentionGrad64(m.problem, f64(m.grad));
  for (const [wrt, data] of gradsByWrt(want)) expectNear(runGrad(m, wrt), data, `${label}: wrt ${wrt}`);
}

const CASES: readonly Case[] = [
  { label: "no mask, L 70, S 150, D 20, Dv 12", B: 2, H: 2, Hkv: 2, L: 70, S: 150, D: 20, Dv: 12, scale: 0.3 },
  {
    label: "causal L = S = 200, GQA 4/2",
    B: 1,
    H: 4,
    Hkv: 2,
    L: 200,
    S: 200,
    D: 16,
    Dv: 16,
    causal: true,
    scale: 0.25,
  },
  {
    label: "causal bottom-right L 50, S 190, GQA 6/3, D 8, Dv 5",
    B: 2,
    H: 6,
    Hkv: 3,
    L: 50,
    S: 190,
    D: 8,
    Dv: 5,
    causal: true,
    alignment: "bottom-right",
    scale: 0.4,
  },
  {
    label: "window 37, L = S = 260, MQA 4/1, padding",
    B: 1,
    H: 4,
    Hkv: 1,
    L: 260,
    S: 260,
    D: 12,
    Dv: 9,
    causal: true,
    window: 37,
    scale: 0.3,
    pad: (_b, j) => (j % 11 === 5 ? 1 : 0),
  },
  {
    label: "causal bottom-right L 130 > S 40: rows with no key",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 130,
    S: 40,
    D: 8,
    Dv: 8,
    causal: true,
    alignment: "bottom-right",
    scale: 0.5,
  },
  {
    label: "dropout 0.25, causal, GQA 4/2, padding, L 90, S 100",
    B: 2,
    H: 4,
    Hkv: 2,
    L: 90,
    S: 100,
    D: 7,
    Dv: 10,
    causal: true,
    alignment: "bottom-right",
    scale: 0.35,
    pad: (b, j) => (b === 1 && j % 5 === 0 ? 1 : 0),
    dropout: { rate: 0.25, seed: 1234 },
  },
  { label: "D = Dv = 1, S 3, L 1", B: 1, H: 1, Hkv: 1, L: 1, S: 3, D: 1, Dv: 1, scale: 1 },
];

describe("attention-lse and attention-grad on wasm against the float64 references", () => {
  CASES.forEach((c, n) => {
    it(c.label, () => expectAll(make(c, 100 + 10 * n), c.label));
  });

  it("GQA: dk and dv sum over every query head of the group (H 6 / Hkv 2, against the per-head sums)", () => {
    const c: Case = { label: "gqa", B: 1, H: 6, Hkv: 2, L: 33, S: 67, D: 8, Dv: 8, scale: 0.5 };
    const m = make(c, 7);
    const want = attentionGrad64(m.problem, f64(m.grad));
    expectNear(runGrad(m, "k"), want.dk, "dk");
    expectNear(runGrad(m, "v"), want.dv, "dv");
    // Heads 0-2 read kv head 0, heads 3-5 kv head 1: zeroing the grad of heads 3-5 leaves kv head 1's dv exactly 0.
    const g = m.grad.contiguous().toFloat32Array().slice();
    g.fill(0, 3 * c.L * c.Dv);
    const dv = runGrad(m, "v", false, { grad: new Tensor(g, m.grad.shape) }).toFloat32Array();
    expect(dv.subarray(c.S * c.Dv).every((x) => x === 0)).toBe(true);
    expect(dv.subarray(0, c.S * c.Dv).some((x) => x !== 0)).toBe(true);
  });

  it("a row without keys: lse −∞, its dq exactly 0, and it adds nothing to dk and dv; keys nobody sees get exactly 0", () => {
    // Batch entry 1 fully padded; top-left causal with a window 3: key j is seen by rows j .. j + 2 only.
    const c: Case = {
      label: "no keys",
      B: 2,
      H: 2,
      Hkv: 1,
      L: 70,
      S: 80,
      D: 8,
      Dv: 8,
      causal: true,
      window: 3,
      scale: 0.5,
      pad: (b, j) => (b === 1 || j === 9 ? 1 : 0),
    };
    const m = make(c, 21);
    const lse = runLse(m).toFloat32Array();
    expect(lse.subarray(c.H * c.L).every((x) => x === -Infinity)).toBe(true);
    const dq = runGrad(m, "q").toFloat32Array();
    const dk = runGrad(m, "k").toFloat32Array();
    const dv = runGrad(m, "v").toFloat32Array();
    for (const d of [dq, dk, dv]) expect(d.every(Number.isFinite)).toBe(true);
    expect(
      dq.subarray(c.H * c.L * c.D).every((x) => x === 0),
      "dq of the padded batch entry",
    ).toBe(true);
    expect(
      dk.subarray(c.S * c.D).every((x) => x === 0),
      "dk of the padded batch entry",
    ).toBe(true);
    for (const [d, w] of [
      [dk, c.D],
      [dv, c.Dv],
    ] as const) {
      for (const j of [9, 72, 79])
        expect(
          d.subarray(j * w, (j + 1) * w).every((x) => x === 0),
          `key ${j} (padded, or past every row's window)`,
        ).toBe(true);
    }
    const want = attentionGrad64(m.problem, f64(m.grad));
    expectNear(runGrad(m, "q"), want.dq, "dq");
    expectNear(runGrad(m, "k"), want.dk, "dk");
    expectNear(runGrad(m, "v"), want.dv, "dv");
  });

  it("NaN and ±∞ where no weight reaches them reach no gradient (hidden key rows of k and v, grad and q of rows with no key)", () => {
    // Key 2 padded everywhere: NaN in its k and v rows. Batch entry 1 fully padded: ∞ and NaN in its q and grad rows.
    const c: Case = {
      label: "bad values",
      B: 2,
      H: 2,
      Hkv: 1,
      L: 70,
      S: 75,
      D: 8,
      Dv: 6,
      scale: 0.5,
      pad: (b, j) => (b === 1 || j === 2 ? 1 : 0),
    };
    const hit = (name: string, data: Float32Array) => {
      if (name === "k") for (let d = 0; d < c.D; d++) data[2 * c.D + d] = NaN;
      if (name === "v") data[2 * c.Dv + 1] = Infinity;
      if (name === "q") data[c.H * c.L * c.D + 5] = Infinity;
      if (name === "grad") data[c.H * c.L * c.Dv + 3 * c.Dv] = NaN;
    };
    const m = make(c, 31, hit);
    const clean = make(c, 31, (name, data) => {
      hit(name, data);
      for (let e = 0; e < data.length; e++) if (!Number.isFinite(data[e]!)) data[e] = 0;
    });
    const want = attentionGrad64(clean.problem, f64(clean.grad));
    const lse = runLse(m).toFloat32Array();
    expect(Array.from(lse.subarray(0, c.H * c.L)).every(Number.isFinite)).toBe(true);
    expect(lse.subarray(c.H * c.L).every((x) => x === -Infinity)).toBe(true);
    for (const [wrt, data] of gradsByWrt(want)) {
      const got = runGrad(m, wrt, false, { out: clean.out, lse: clean.lse });
      expect(got.toFloat32Array().every(Number.isFinite), `wrt ${wrt} finite`).toBe(true);
      expectNear(got, data, `wrt ${wrt}`);
    }
  });

  it("transposed inputs, inputs strided along their last axis (copied first), a strided lse", () => {
    const c: Case = {
      label: "strided",
      B: 2,
      H: 4,
      Hkv: 2,
      L: 75,
      S: 90,
      D: 12,
      Dv: 10,
      causal: true,
      scale: 0.3,
      pad: (_b, j) => (j === 4 ? 1 : 0),
      dropout: { rate: 0.1, seed: 5 },
    };
    const m = make(c, 41);
    const want = attentionGrad64(m.problem, f64(m.grad));
    /** The same values, stored with axes `perm` of them first: a view with other strides. */
    const relaid = (t: Tensor, perm: number[]) =>
      t
        .permute(perm)
        .contiguous()
        .permute(perm.map((_, i) => perm.indexOf(i)));
    const heads = [0, 2, 1, 3];
    const lastFirst = [3, 0, 1, 2];
    const over = {
      q: relaid(m.q, lastFirst),
      k: relaid(m.k, heads),
      v: relaid(m.v, lastFirst),
      out: relaid(m.out, lastFirst),
      grad: relaid(m.grad, heads),
      lse: relaid(m.lse, [2, 1, 0]),
    };
    for (const [wrt, data] of gradsByWrt(want)) expectNear(runGrad(m, wrt, true, over), data, `wrt ${wrt}`);
    expectNear(runLse(m, over.q, relaid(m.k, lastFirst), true), attentionLse64(m.problem), "lse");
  });

  it("a NaN score makes its row's lse NaN; a row's lse of −∞ makes its dq 0 whatever its keys", () => {
    const c: Case = { label: "nan", B: 1, H: 1, Hkv: 1, L: 5, S: 9, D: 4, Dv: 4, scale: 1 };
    const m = make(c, 51, (name, data) => {
      if (name === "q") data[2 * c.D] = NaN;
    });
    const lse = runLse(m).toFloat32Array();
    expect(Number.isNaN(lse[2])).toBe(true);
    expect([0, 1, 3, 4].every((r) => Number.isFinite(lse[r]!))).toBe(true);
    const l = m.lse.toFloat32Array().slice();
    l[3] = -Infinity;
    const dq = runGrad(m, "q", false, { lse: new Tensor(l, m.lse.shape) }).toFloat32Array();
    expect(dq.subarray(3 * c.D, 4 * c.D).every((x) => x === 0)).toBe(true);
  });

  it("bad calls: missing lse, padding values other than 0/1, an unknown wrt", () => {
    const c = CASES[0]!;
    const m = make({ ...c, B: 1, L: 3, S: 4, pad: () => 0 }, 61);
    const badPad = Tensor.from([0, 0.5, 1, 0], [1, 4]);
    expect(() =>
      onWasm(
        ex,
        "attention-grad",
        { ...m.attrs("q") },
        [m.q, m.k, m.v, m.out, m.grad, m.lse, badPad],
        m.shapeOf("q"),
        "attn.bwd",
      ),
    ).toThrow(/attn\.bwd\.keyPaddingMask/);
    expect(() => onWasm(ex, "attention-lse", { ...m.lseAttrs }, [m.q, m.k, badPad], [1, c.H, 3], "attn.lse")).toThrow(
      /attn\.lse\.keyPaddingMask/,
    );
    expect(() =>
      onWasm(
        ex,
        "attention-grad",
        { ...m.attrs("q") },
        [m.q, m.k, m.v, m.out, m.grad, undefined, undefined],
        m.shapeOf("q"),
        "attn.bwd",
      ),
    ).toThrow(/attn\.bwd\.lse/);
    expect(() =>
      onWasm(ex, "attention-grad", { ...m.attrs("q"), wrt: "out" }, inputs(m), m.shapeOf("q"), "attn.bwd"),
    ).toThrow(/attn\.bwd\.wrt/);
  });
});

describe("attention-lse and attention-grad in chunks", () => {
  /** `kind` (as node `kind`) on `tiny` with a signal: a Promise of its output, everything released. */
  const chunked = (
    tiny: WasmExecutor,
    kind: string,
    attrs: Record<string, unknown>,
    inputs: readonly (AnyTensor | undefined)[],
    outShape: Shape,
  ): Promise<Tensor> =>
    runHostCall(tiny, { kind, node: kind, attrs, inputs, outShape }, new AbortController().signal, true);
  const bits = (t: Tensor) => new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer);

  it("bit for bit the numbers of one uninterrupted call, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const c: Case = {
      label: "chunks",
      B: 2,
      H: 4,
      Hkv: 2,
      L: 150,
      S: 200,
      D: 12,
      Dv: 9,
      causal: true,
      window: 90,
      alignment: "bottom-right",
      scale: 0.35,
      pad: (_b, j) => (j % 7 === 3 ? 1 : 0),
      dropout: { rate: 0.2, seed: 11 },
    };
    const m = make(c, 71, (name, data) => {
      if (name === "k") data[3 * c.D] = NaN; // key 3 is padded: a bad key row (the zero-skipping product)
    });
    const lse = await chunked(tiny, "attention-lse", { ...m.lseAttrs }, [m.q, m.k, m.pad], [c.B, c.H, c.L]);
    expect(bits(lse)).toEqual(bits(runLse(m)));
    for (const wrt of ["q", "k", "v"] as const) {
      const got = await chunked(tiny, "attention-grad", { ...m.attrs(wrt) }, inputs(m), m.shapeOf(wrt));
      expect(bits(got), `wrt ${wrt}`).toEqual(bits(runGrad(m, wrt)));
    }
    expect(tiny.inUseBytes).toBe(0);
  });

  it("many small heads from views with their own batch and head strides: the one-call loop in the module, bit for bit the per-head steps", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const c: Case = {
      label: "small heads",
      B: 5,
      H: 6,
      Hkv: 2,
      L: 70,
      S: 9,
      D: 8,
      Dv: 5,
      causal: true,
      alignment: "bottom-right",
      scale: 0.4,
      pad: (b, j) => ((b + j) % 5 === 2 ? 1 : 0),
      dropout: { rate: 0.3, seed: 5 },
    };
    const m = make(c, 91);
    // Each tensor as a view of storage laid out [B, L, H, D] (or [L, B, H] for lse): batch and head strides that are
    // neither dense nor in order, rows still unit-stride along their last axis.
    const heads = (t: Tensor) => t.permute([0, 2, 1, 3]).contiguous().permute([0, 2, 1, 3]);
    const over = {
      q: heads(m.q),
      k: heads(m.k),
      v: heads(m.v),
      out: heads(m.out),
      grad: heads(m.grad),
      lse: m.lse.permute([2, 0, 1]).contiguous().permute([1, 2, 0]),
    };
    const xs = inputs(m, over);
    const { wrt: _, ...forward } = m.attrs("q");
    const calls: [string, Record<string, unknown>, readonly (AnyTensor | undefined)[], Shape][] = [
      ["attention", forward, [over.q, over.k, over.v, m.pad], [c.B, c.H, c.L, c.Dv]],
      ["attention-lse", { ...m.lseAttrs }, [over.q, over.k, m.pad], [c.B, c.H, c.L]],
      ...(["q", "k", "v"] as const).map(
        (wrt): [string, Record<string, unknown>, readonly (AnyTensor | undefined)[], Shape] => [
          "attention-grad",
          { ...m.attrs(wrt) },
          xs,
          m.shapeOf(wrt),
        ],
      ),
    ];
    for (const [kind, attrs, args, shape] of calls) {
      const values = args.map((t) => (t === undefined ? undefined : uploadView(tiny, t)));
      try {
        const call: KernelCall<WasmValue> = { kind, node: kind, attrs, inputs: values, outShape: shape };
        const one = tiny.dispatch(call) as WasmValue;
        const want = tiny.download(one).contiguous();
        tiny.release(one);
        const pending = tiny.dispatch({ ...call, signal: new AbortController().signal });
        expect(pending).toBeInstanceOf(Promise);
        const chunks = await pending;
        const got = tiny.download(chunks).contiguous();
        tiny.release(chunks);
        expect(bits(got), `${kind} ${String(attrs.wrt ?? "")}`).toEqual(bits(want));
        if (kind === "attention-grad")
          expect(
            worst(got, onWasm(ex, kind, attrs, inputs(m), shape)),
            `${kind} ${String(attrs.wrt)} from dense inputs`,
          ).toBe(0);
      } finally {
        for (const v of values) if (v) tiny.release(v);
      }
    }
    expect(tiny.inUseBytes).toBe(0);
  });
});
