// The fused attention backward kernels (attention-lse, attention-grad wrt q, k, v) against the testkit's float64
// references of the unfused chain, on what the contract suite does not stress here: spaced inputs (offset, doubled
// strides, NaN junk between the elements, so a read outside a view shows), GQA with a window over more than one block
// of query rows per key, dropout with GQA, rows that see no key (lse −∞, dq exactly 0, keys nobody sees exactly 0), a
// NaN score (lse NaN), and the padding value check shared with the forward attention kernel.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import {
  attentionGrad64,
  attentionLse64,
  attentionOut64,
  mulberry32,
  type AttentionProblem64,
} from "@attngraph/testkit";
import { createWebGpuExecutor } from "./index.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { GpuOps } from "./test-gpu.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const TOL = { abs: 5e-5, rel: 5e-4 };
type Wrt = "q" | "k" | "v";

interface Case {
  readonly label: string;
  readonly dims: AttentionProblem64["dims"];
  readonly mask?: Partial<AttentionProblem64["mask"]>;
  readonly scale: number;
  readonly pad?: (b: number, j: number) => number;
  readonly dropout?: { readonly rate: number; readonly seed: number };
  /** Read every input through a spaced view (offset 1, doubled strides, NaN junk between). */
  readonly spaced?: boolean;
}

function normal(seed: number, n: number): Float32Array {
  const u = mulberry32(seed);
  return Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

function make(c: Case, seed: number) {
  const { B, H, Hkv, L, S, D, Dv } = c.dims;
  const q = Tensor.from(normal(seed, B * H * L * D), [B, H, L, D]);
  const k = Tensor.from(normal(seed + 1, B * Hkv * S * D), [B, Hkv, S, D]);
  const v = Tensor.from(normal(seed + 2, B * Hkv * S * Dv), [B, Hkv, S, Dv]);
  const grad = Tensor.from(normal(seed + 3, B * H * L * Dv), [B, H, L, Dv]);
  const pad = c.pad
    ? Tensor.from(
        Array.from({ length: B * S }, (_, e) => c.pad!(Math.floor(e / S), e % S)),
        [B, S],
      )
    : undefined;
  const mask = { causal: false, window: null, alignment: "top-left", ...c.mask } as AttentionProblem64["mask"];
  const f64 = (t: Tensor) => Float64Array.from(t.toFloat32Array());
  const problem: AttentionProblem64 = {
    q: f64(q),
    k: f64(k),
    v: f64(v),
    ...(pad ? { pad: f64(pad) } : {}),
    dims: c.dims,
    mask,
    scale: c.scale,
    ...(c.dropout ? { dropout: c.dropout } : {}),
  };
  const out = Tensor.from(Float32Array.from(attentionOut64(problem)), [B, H, L, Dv]);
  const lse = Tensor.from(Float32Array.from(attentionLse64(problem)), [B, H, L]);
  const lseAttrs = { ...mask, scale: c.scale };
  const drop = c.dropout ?? { rate: 0, seed: 0 };
  const attrs = (wrt: Wrt) => ({
    ...lseAttrs,
    dropoutRate: drop.rate,
    dropoutSeed: drop.seed,
    training: c.dropout !== undefined,
    wrt,
  });
  const want = attentionGrad64(problem, f64(grad));
  return { q, k, v, grad, pad, out, lse, lseAttrs, attrs, problem, want };
}

function shapeOf(c: Case, wrt: Wrt): number[] {
  const { B, H, Hkv, L, S, D, Dv } = c.dims;
  return wrt === "q" ? [B, H, L, D] : wrt === "k" ? [B, Hkv, S, D] : [B, Hkv, S, Dv];
}

function expectClose(got: Tensor, want: ArrayLike<number>, label: string): void {
  const r = compare(got, Array.from(want), TOL);
  expect({ label, ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
}

const CASES: readonly Case[] = [
  {
    label: "vs the testkit reference, no mask, S = 70 (two key blocks)",
    dims: { B: 1, H: 2, Hkv: 2, L: 5, S: 70, D: 8, Dv: 8 },
    scale: 0.35,
  },
  {
    label: "GQA H=6/Hkv=2, causal window 40, L = S = 90 (a key's query rows span blocks and heads)",
    dims: { B: 1, H: 6, Hkv: 2, L: 90, S: 90, D: 4, Dv: 6 },
    mask: { causal: true, window: 40 },
    scale: 0.5,
  },
  {
    label: "spaced inputs, causal GQA, dropout 0.25, padding",
    dims: { B: 2, H: 4, Hkv: 2, L: 7, S: 9, D: 5, Dv: 3 },
    mask: { causal: true, alignment: "bottom-right" },
    scale: 0.6,
    pad: (b, j) => (b === 0 && j === 4 ? 1 : 0),
    dropout: { rate: 0.25, seed: 11 },
    spaced: true,
  },
];

describe("attention-lse and attention-grad vs the float64 reference", () => {
  CASES.forEach((c, n) => {
    it(c.label, async () => {
      const m = make(c, 300 + 10 * n);
      const place = async (t: Tensor | undefined): Promise<Tensor | GpuTensor | undefined> =>
        t && c.spaced ? ops.spaced(t) : t;
      const [q, k, v, out, grad, lse, pad] = await Promise.all([m.q, m.k, m.v, m.out, m.grad, m.lse, m.pad].map(place));
      const { B, H, L } = c.dims;
      const gotLse = await ops.run("attention-lse", m.lseAttrs, [q, k, pad], [B, H, L]);
      expectClose(gotLse, attentionLse64(m.problem), "lse");
      for (const [wrt, want] of [
        ["q", m.want.dq],
        ["k", m.want.dk],
        ["v", m.want.dv],
      ] as const) {
        const got = await ops.run("attention-grad", m.attrs(wrt), [q, k, v, out, grad, lse, pad], shapeOf(c, wrt));
        expectClose(got, want, `wrt ${wrt}`);
      }
    });
  });

  it("rows that see no key: lse −∞, dq exactly 0; keys that no query sees: dk and dv exactly 0; nothing NaN", async () => {
    // bottom-right causal with L > S: rows 0..2 see nothing; batch entry 1 is fully padded; key 1 of batch 0 padded.
    const c: Case = {
      label: "no keys",
      dims: { B: 2, H: 2, Hkv: 1, L: 6, S: 3, D: 4, Dv: 4 },
      mask: { causal: true, alignment: "bottom-right" },
      scale: 0.5,
      pad: (b, j) => (b === 1 || j === 1 ? 1 : 0),
    };
    const m = make(c, 400);
    const { B, H, L, S, D } = c.dims;
    const lse = (await ops.run("attention-lse", m.lseAttrs, [m.q, m.k, m.pad], [B, H, L])).toFloat32Array();
    const wantLse = attentionLse64(m.problem);
    wantLse.forEach((w, r) => {
      if (w === -Infinity) expect(lse[r], `row ${r}`).toBe(-Infinity);
      else expect(Math.abs(lse[r]! - w)).toBeLessThan(1e-4);
    });
    expect(wantLse.filter((w) => w === -Infinity).length).toBe(B * H * L - 2 * 3); // only batch 0's last three rows see a key
    const run = async (wrt: Wrt) =>
      (
        await ops.run("attention-grad", m.attrs(wrt), [m.q, m.k, m.v, m.out, m.grad, m.lse, m.pad], shapeOf(c, wrt))
      ).toFloat32Array();
    const [dq, dk, dv] = [await run("q"), await run("k"), await run("v")];
    for (const [name, d] of [
      ["dq", dq],
      ["dk", dk],
      ["dv", dv],
    ] as const)
      expect(d.every(Number.isFinite), `${name} finite`).toBe(true);
    wantLse.forEach((w, r) => {
      if (w === -Infinity) expect(Array.from(dq.subarray(r * D, (r + 1) * D)), `dq row ${r}`).toEqual([0, 0, 0, 0]);
    });
    for (let b = 0; b < B; b++)
      for (let j = 0; j < S; j++) {
        if (!c.pad!(b, j)) continue;
        const at = (b * S + j) * D;
        expect(Array.from(dk.subarray(at, at + D)), `dk [${b}, 0, ${j}]`).toEqual([0, 0, 0, 0]);
        expect(Array.from(dv.subarray(at, at + D)), `dv [${b}, 0, ${j}]`).toEqual([0, 0, 0, 0]);
      }
    expectClose(Tensor.from(dq, shapeOf(c, "q")), m.want.dq, "dq");
    expectClose(Tensor.from(dk, shapeOf(c, "k")), m.want.dk, "dk");
    expectClose(Tensor.from(dv, shapeOf(c, "v")), m.want.dv, "dv");
  });

  it("a NaN score makes that row's lse NaN, and only that row's", async () => {
    const q = Tensor.from(normal(500, 1 * 1 * 3 * 4), [1, 1, 3, 4]);
    const kData = normal(501, 5 * 4);
    kData[2 * 4 + 1] = NaN; // key 2: every row that sees it gets a NaN score
    const k = Tensor.from(kData, [1, 1, 5, 4]);
    const attrs = { causal: true, window: null, alignment: "top-left", scale: 1 };
    const lse = (await ops.run("attention-lse", attrs, [q, k, undefined], [1, 1, 3])).toFloat32Array();
    expect(Number.isFinite(lse[0]!) && Number.isFinite(lse[1]!), "rows 0 and 1 do not see key 2").toBe(true);
    expect(lse[2]).toBeNaN();
  });

  it("a padding value of 2 is the forward attention's error, naming <node>.keyPaddingMask", async () => {
    const c = CASES[0]!;
    const m = make(c, 600);
    const pad = Tensor.from(
      Array.from({ length: c.dims.S }, (_, j) => (j === 3 ? 2 : 0)),
      [1, c.dims.S],
    );
    const e = await ops.error(
      "attention-grad",
      m.attrs("k"),
      [m.q, m.k, m.v, m.out, m.grad, m.lse, pad],
      shapeOf(c, "k"),
      "blocks.0.attn_grad",
    );
    expect(e).toMatchObject({
      code: "input",
      subject: "blocks.0.attn_grad.keyPaddingMask",
      expected: "0 or 1",
      got: "2 at [0, 3]",
    });
    const e2 = await ops.error("attention-lse", m.lseAttrs, [m.q, m.k, pad], [1, 2, 5], "blocks.0.attn_lse");
    expect(e2).toMatchObject({ code: "input", subject: "blocks.0.attn_lse.keyPaddingMask" });
  });
});
