// The fused attention kernels with score and mask modifications (attention, attention-lse, attention-grad wrt q, k,
// v) against a float64 reference written from the definition (test-flex64.ts), on golden-flex-like variants (causal
// as a mask modification, ALiBi with gathered per-head slopes, softcap, a gathered relative bias table, document ids,
// prefix-LM, a gathered keep mask) with GQA, L ≠ S, key blocks past the first, key padding and dropout; and the typed
// errors: a gathered index out of range (ExprIndexError, never a NaN), too many storage buffers, wrt a gathered input.
import { afterAll, describe, expect, it } from "vitest";
import type { Expr, GatheredTensor } from "@attngraph/graph";
import { Tensor, compare } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import { createWebGpuExecutor } from "./index.js";
import { GpuOps } from "./test-gpu.js";
import { flexForward64, flexGrad64, type Flex64 } from "@attngraph/testkit";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const TOL = { abs: 5e-5, rel: 5e-4 };

const ge = (a: Expr, b: Expr): Expr => ({ op: "ge", args: [a, b] });
const input = (name: string, index: Expr[]): Expr => ({ op: "input", name, index });

interface Case {
  readonly label: string;
  readonly dims: Flex64["dims"];
  readonly causal?: boolean;
  readonly alignment?: "top-left" | "bottom-right";
  readonly scale: number;
  readonly pad?: (b: number, j: number) => number;
  readonly dropout?: { readonly rate: number; readonly seed: number };
  readonly scoreMod?: Expr;
  readonly maskMod?: Expr;
  /** Gathered inputs by name: shape and a value per flat index. */
  readonly gathered?: Record<string, { shape: number[]; value: (e: number) => number }>;
}

function normal(seed: number, n: number): Float32Array {
  const u = mulberry32(seed);
  return Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

const softcap: Expr = { op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: ["score", 2] }] }, 2] };
const alibi: Expr = {
  op: "add",
  args: ["score", { op: "mul", args: [input("slopes", ["h"]), { op: "sub", args: ["kv", "q"] }] }],
};
const docMask: Expr = {
  op: "and",
  args: [{ op: "eq", args: [input("doc", ["b", "q"]), input("doc", ["b", "kv"])] }, ge("q", "kv")],
};

const CASES: readonly Case[] = [
  {
    label: "causal as a mask modification ge(q, kv)",
    dims: { B: 2, H: 2, Hkv: 2, L: 9, S: 9, D: 8, Dv: 8 },
    scale: 0.35,
    maskMod: ge("q", "kv"),
  },
  {
    label: "ALiBi with gathered per-head slopes, GQA H=4/Hkv=2, causal mask modification",
    dims: { B: 2, H: 4, Hkv: 2, L: 10, S: 10, D: 8, Dv: 8 },
    scale: 0.35,
    scoreMod: alibi,
    maskMod: ge("q", "kv"),
    gathered: { slopes: { shape: [4], value: (h) => 2 ** -(h + 1) } },
  },
  {
    label: "softcap tanh, positional causal, S = 70 (two key blocks)",
    dims: { B: 1, H: 2, Hkv: 2, L: 12, S: 70, D: 8, Dv: 4 },
    causal: true,
    alignment: "bottom-right",
    scale: 1.5,
    scoreMod: softcap,
  },
  {
    label: "relative bias table [H, L + S − 1], L ≠ S",
    dims: { B: 1, H: 2, Hkv: 1, L: 5, S: 7, D: 8, Dv: 6 },
    scale: 0.4,
    scoreMod: {
      op: "add",
      args: ["score", input("bias", ["h", { op: "add", args: [{ op: "sub", args: ["q", "kv"] }, 6] }])],
    },
    gathered: { bias: { shape: [2, 11], value: (e) => Math.sin(e) } },
  },
  {
    label: "document ids [B, T] with eq, key padding and dropout, GQA",
    dims: { B: 2, H: 4, Hkv: 2, L: 12, S: 12, D: 8, Dv: 8 },
    scale: 0.5,
    maskMod: docMask,
    pad: (b, j) => (b === 1 && j >= 10 ? 1 : 0),
    dropout: { rate: 0.25, seed: 7 },
    gathered: { doc: { shape: [2, 12], value: (e) => (e % 12 < 5 ? 0 : e % 12 < 9 ? 1 : 2) + 3 * Math.floor(e / 12) } },
  },
  {
    label: "prefix-LM with or, T = 130 (three key blocks)",
    dims: { B: 2, H: 2, Hkv: 2, L: 130, S: 130, D: 16, Dv: 16 },
    scale: 0.25,
    maskMod: { op: "or", args: [{ op: "lt", args: ["kv", input("prefix", ["b"])] }, ge("q", "kv")] },
    gathered: { prefix: { shape: [2], value: (b) => [40, 70][b]! } },
  },
  {
    label: "a gathered keep mask [B, H, L, S], GQA, L ≠ S, ALiBi, padding, dropout",
    dims: { B: 2, H: 4, Hkv: 2, L: 6, S: 9, D: 4, Dv: 5 },
    causal: true,
    alignment: "bottom-right",
    scale: 0.6,
    scoreMod: alibi,
    maskMod: { op: "gt", args: [input("keep", ["b", "h", "q", "kv"]), 0.5] },
    pad: (b, j) => (j === 2 + b ? 1 : 0),
    dropout: { rate: 0.3, seed: 11 },
    gathered: {
      keep: { shape: [2, 4, 6, 9], value: (e) => ((e * 7919) % 5 === 0 ? 0 : 1) },
      slopes: { shape: [4], value: (h) => 0.5 / (h + 1) },
    },
  },
  {
    label: "a score modification of −∞ hides keys: row 0 sees none (zeros, lse −∞, no NaN in any gradient)",
    dims: { B: 1, H: 2, Hkv: 1, L: 5, S: 5, D: 4, Dv: 4 },
    scale: 0.5,
    scoreMod: { op: "where", args: [{ op: "lt", args: ["kv", "q"] }, "score", { op: "log", args: [0] }] },
  },
  {
    label: "an index gathered from a tensor (checked on the host), in range",
    dims: { B: 1, H: 2, Hkv: 2, L: 4, S: 6, D: 4, Dv: 4 },
    scale: 0.5,
    scoreMod: { op: "add", args: ["score", input("table", [input("bucket", ["kv"])])] },
    gathered: { table: { shape: [3], value: (e) => e - 1 }, bucket: { shape: [6], value: (j) => j % 3 } },
  },
];

function setup(c: Case) {
  const { B, H, Hkv, L, S, D, Dv } = c.dims;
  const q = Tensor.from(normal(1, B * H * L * D), [B, H, L, D]);
  const k = Tensor.from(normal(2, B * Hkv * S * D), [B, Hkv, S, D]);
  const v = Tensor.from(normal(3, B * Hkv * S * Dv), [B, Hkv, S, Dv]);
  const grad = Tensor.from(normal(4, B * H * L * Dv), [B, H, L, Dv]);
  const pad = c.pad
    ? Tensor.from(
        Array.from({ length: B * S }, (_, e) => c.pad!(Math.floor(e / S), e % S)),
        [B, S],
      )
    : undefined;
  const names = Object.keys(c.gathered ?? {});
  const gathered = names.map((n) => {
    const g = c.gathered![n]!;
    return Tensor.from(
      Array.from({ length: g.shape.reduce((a, d) => a * d, 1) }, (_, e) => g.value(e)),
      g.shape,
    );
  });
  const host = new Map<string, GatheredTensor>(
    names.map((n, i) => [
      n,
      { data: gathered[i]!.toFloat32Array(), shape: gathered[i]!.shape, strides: gathered[i]!.strides, offset: 0 },
    ]),
  );
  const problem: Flex64 = {
    dims: c.dims,
    q: q.toFloat32Array(),
    k: k.toFloat32Array(),
    v: v.toFloat32Array(),
    causal: c.causal ?? false,
    window: null,
    alignment: c.alignment ?? "top-left",
    scale: c.scale,
    ...(pad ? { pad: pad.toFloat32Array() } : {}),
    ...(c.dropout ? { dropout: c.dropout } : {}),
    scoreMod: c.scoreMod ?? null,
    maskMod: c.maskMod ?? null,
    gathered: host,
  };
  const mods = { scoreMod: c.scoreMod ?? null, maskMod: c.maskMod ?? null, inputs: names };
  const lseAttrs = { causal: problem.causal, window: null, alignment: problem.alignment, scale: c.scale, ...mods };
  const drop = c.dropout ?? { rate: 0, seed: 0 };
  const attrs = { ...lseAttrs, dropoutRate: drop.rate, dropoutSeed: drop.seed, training: c.dropout !== undefined };
  return { q, k, v, grad, pad, gathered, problem, lseAttrs, attrs };
}

function expectClose(got: Tensor, want: ArrayLike<number>, label: string): void {
  const r = compare(got, Array.from(want), TOL);
  expect({ label, ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
  expect(
    got.toFloat32Array().every((x) => !Number.isNaN(x)),
    `${label}: no NaN`,
  ).toBe(true);
}

describe("fused attention with modifications vs a float64 reference", () => {
  for (const c of CASES) {
    it(c.label, async () => {
      const s = setup(c);
      const { B, H, Hkv, L, S, D, Dv } = c.dims;
      const ref = flexForward64(s.problem);
      const out = await ops.run("attention", s.attrs, [s.q, s.k, s.v, s.pad, ...s.gathered], [B, H, L, Dv]);
      expectClose(out, ref.out, "out");
      const lse = await ops.run("attention-lse", s.lseAttrs, [s.q, s.k, s.pad, ...s.gathered], [B, H, L]);
      expectClose(lse, ref.lse, "lse");
      const want = flexGrad64(s.problem, s.grad.toFloat32Array());
      const outT = Tensor.from(Float32Array.from(ref.out), [B, H, L, Dv]);
      const lseT = Tensor.from(Float32Array.from(ref.lse), [B, H, L]);
      const shapes = { q: [B, H, L, D], k: [B, Hkv, S, D], v: [B, Hkv, S, Dv] };
      for (const wrt of ["q", "k", "v"] as const) {
        const got = await ops.run(
          "attention-grad",
          { ...s.attrs, wrt },
          [s.q, s.k, s.v, outT, s.grad, lseT, s.pad, ...s.gathered],
          shapes[wrt],
        );
        expectClose(got, wrt === "q" ? want.dq : wrt === "k" ? want.dk : want.dv, `d${wrt}`);
      }
    });
  }

  it("gathered inputs read through strided, offset views (NaN junk between their elements)", async () => {
    const c = CASES.find((x) => x.label.startsWith("a gathered keep mask"))!;
    const s = setup(c);
    const { B, H, L, Dv } = c.dims;
    const spaced = await Promise.all(s.gathered.map((t) => ops.spaced(t)));
    const out = await ops.run("attention", s.attrs, [s.q, s.k, s.v, s.pad, ...spaced], [B, H, L, Dv]);
    expectClose(out, flexForward64(s.problem).out, "out");
  });

  it("an operation on literals only whose value is not finite compiles (WGSL would reject it as a constant)", async () => {
    const expr: Expr = { op: "add", args: ["score", { op: "exp", args: [100] }] };
    const got = await ops.run(
      "score-mod",
      { scale: 1, expr, inputs: [] },
      [Tensor.from([1, 2, 3, 4], [1, 1, 2, 2])],
      [1, 1, 2, 2],
    );
    expect(Array.from(got.toFloat32Array())).toEqual([Infinity, Infinity, Infinity, Infinity]);
  });

  it("supports() accepts modifications for the fused ops and a gathered input's gradient", () => {
    const mods = { scoreMod: softcap, maskMod: null, inputs: [] };
    expect(webgpu.supports("attention", mods).ok).toBe(true);
    expect(webgpu.supports("attention-lse", mods).ok).toBe(true);
    expect(webgpu.supports("attention-grad", { ...mods, wrt: "q" }).ok).toBe(true);
    // The gradient of a gathered input runs on the host (numbers: reliability's flex-fused.test.ts, fused vs unfused).
    expect(webgpu.supports("attention-grad", { ...mods, wrt: "g0" }).ok).toBe(true);
  });
});

describe("typed errors of the modifications", () => {
  const c: Case = {
    label: "an out-of-range gathered index",
    dims: { B: 1, H: 2, Hkv: 2, L: 3, S: 5, D: 4, Dv: 4 },
    scale: 0.5,
    scoreMod: { op: "add", args: ["score", input("table", [input("bucket", ["kv"])])] },
    gathered: { table: { shape: [3], value: (e) => e }, bucket: { shape: [5], value: (j) => (j === 4 ? 3 : j % 3) } },
  };

  it("an index out of range is an ExprIndexError on every fused op, never a NaN", async () => {
    const s = setup(c);
    const { B, H, Hkv, L, S, D, Dv } = c.dims;
    const index = { code: "index", name: "ExprIndexError", subject: expect.stringContaining("mods.scoreMod") };
    expect(
      await ops.error("attention", s.attrs, [s.q, s.k, s.v, undefined, ...s.gathered], [B, H, L, Dv], "mods"),
    ).toMatchObject(index);
    expect(
      await ops.error("attention-lse", s.lseAttrs, [s.q, s.k, undefined, ...s.gathered], [B, H, L], "mods"),
    ).toMatchObject(index);
    const outT = Tensor.from(new Float32Array(B * H * L * Dv), [B, H, L, Dv]);
    const lseT = Tensor.from(new Float32Array(B * H * L), [B, H, L]);
    for (const [wrt, shape] of [
      ["q", [B, H, L, D]],
      ["k", [B, Hkv, S, D]],
      ["v", [B, Hkv, S, Dv]],
    ] as const) {
      expect(
        await ops.error(
          "attention-grad",
          { ...s.attrs, wrt },
          [s.q, s.k, s.v, outT, s.grad, lseT, undefined, ...s.gathered],
          shape,
          "mods",
        ),
      ).toMatchObject(index);
    }
  });

  it("a mask modification's out-of-range index too, even where the position hides the key", async () => {
    const { scoreMod: _unused, ...rest } = c;
    const s = setup({
      ...rest,
      maskMod: { op: "gt", args: [input("table", [input("bucket", ["kv"])]), 0] },
      causal: true,
    });
    const { B, H, L, Dv } = c.dims;
    expect(
      await ops.error(
        "attention",
        { ...s.attrs, causal: true },
        [s.q, s.k, s.v, undefined, ...s.gathered],
        [B, H, L, Dv],
        "mods",
      ),
    ).toMatchObject({ code: "index", subject: expect.stringContaining("mods.maskMod") });
  });

  it("gathered views past the params words are an UnsupportedError", async () => {
    // Seven rank-6 inputs: 7 · 14 words beside the forward's own ~50, more than the 128 a program has.
    const names = Array.from({ length: 7 }, (_, i) => `t${i}`);
    const sum = names.reduce<Expr>((a, name) => ({ op: "add", args: [a, input(name, [0, 0, 0, 0, 0, "b"])] }), "score");
    const gathered = Object.fromEntries(names.map((name) => [name, { shape: [1, 1, 1, 1, 1, 1], value: () => 0.1 }]));
    const s = setup({ ...c, scoreMod: sum, gathered });
    const { B, H, L, Dv } = c.dims;
    const inputs = await Promise.all([s.q, s.k, s.v, undefined, ...s.gathered].map((t) => ops.value(t)));
    const held = webgpu.buffersInUse;
    const e = await ops.error("attention", s.attrs, inputs, [B, H, L, Dv], "mods");
    expect(e).toMatchObject({
      code: "unsupported",
      subject: "mods",
      message: expect.stringContaining("words of params"),
    });
    expect(webgpu.buffersInUse, "the output is released").toBe(held);
  });

  it("more gathered inputs than the device binds is an UnsupportedError, not a validation error", async () => {
    const limit = (await webgpu.init(), webgpu.device!.limits.maxStorageBuffersPerShaderStage);
    // dq binds 8 buffers of its own: one more than the limit leaves needs limit − 7 gathered inputs (at most 8).
    const n = Math.min(8, limit - 7);
    const names = Array.from({ length: n }, (_, i) => `t${i}`);
    const sum = names.reduce<Expr>((a, name) => ({ op: "add", args: [a, input(name, ["h"])] }), "score");
    const gathered = Object.fromEntries(names.map((name) => [name, { shape: [2], value: () => 0.1 }]));
    const s = setup({ ...c, scoreMod: sum, gathered });
    const { B, H, L, D, Dv } = c.dims;
    const outT = Tensor.from(new Float32Array(B * H * L * Dv), [B, H, L, Dv]);
    const lseT = Tensor.from(new Float32Array(B * H * L), [B, H, L]);
    const e = await ops.error(
      "attention-grad",
      { ...s.attrs, wrt: "q" },
      [s.q, s.k, s.v, outT, s.grad, lseT, undefined, ...s.gathered],
      [B, H, L, D],
      "mods",
    );
    if (limit - 7 <= 8)
      expect(e).toMatchObject({
        code: "unsupported",
        subject: "mods",
        message: expect.stringContaining("storage buffers"),
      });
    else expect(e).toBeUndefined();
  });
});
