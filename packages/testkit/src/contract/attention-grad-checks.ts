// The fused attention backward (attention-lse, attention-grad) against the float64 references of the unfused chain
// (reference/attention-grad64.ts): every mask geometry (causal either alignment, window, key padding), grouped and
// multi-query heads, L != S, Dv != D, dropout, lengths past a 64-key block, strided inputs made on the executor; rows
// that see no key (a fully padded batch entry, bottom-right causal with L > S) get lse −∞ and exactly zero gradient,
// never NaN; a NaN in a hidden key's value row reaches no gradient. Bad calls are typed errors naming the field.
// Legend: B batch, H heads, Hkv kv heads, L queries, S keys, D head dim of q and k, Dv head dim of v.
import { expect, it } from "vitest";
import { Tensor, type Tolerance } from "@attngraph/tensor";
import type { AttentionGradCase } from "../reference/attention-grad-case.js";
import { attentionGrad64, attentionLse64, attentionOut64 } from "../reference/attention-grad64.js";
import {
  attentionGradTensors,
  gradsByWrt,
  type AttentionGradTensors,
  type QkvWrt,
} from "../reference/attention-grad-tensors.js";
import { attentionGradInputs } from "./attention-grad-inputs.js";
import { expectTypedError } from "./block-checks.js";
import type { ContractContext } from "./context.js";
import { expectClose, runValues, stridedOn, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

/** Float32 recomputation of exp(s − lse) and sums over up to 130 keys against float64: looser than one elementwise op. */
const GRAD_TOL: Tolerance = { abs: 5e-5, rel: 5e-4 };

interface Case extends AttentionGradCase {
  readonly label: string;
}

const CASES: readonly Case[] = [
  { label: "plain, H = Hkv = 2", B: 1, H: 2, Hkv: 2, L: 5, S: 5, D: 4, Dv: 4, scale: 0.5 },
  {
    label: "causal GQA H=4/Hkv=2, Dv != D",
    B: 2,
    H: 4,
    Hkv: 2,
    L: 6,
    S: 6,
    D: 8,
    Dv: 4,
    causal: true,
    scale: 1 / Math.sqrt(8),
  },
  {
    label: "MQA H=3/Hkv=1, causal window 2, bottom-right, L < S",
    B: 1,
    H: 3,
    Hkv: 1,
    L: 3,
    S: 7,
    D: 4,
    Dv: 6,
    causal: true,
    window: 2,
    alignment: "bottom-right",
    scale: 0.7,
  },
  {
    label: "key padding with a fully padded batch entry",
    B: 2,
    H: 2,
    Hkv: 1,
    L: 3,
    S: 4,
    D: 4,
    Dv: 4,
    scale: 0.5,
    pad: (b, j) => (b === 1 || j === 2 ? 1 : 0),
  },
  {
    label: "causal bottom-right with L > S: the first rows see no key",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 6,
    S: 3,
    D: 4,
    Dv: 4,
    causal: true,
    alignment: "bottom-right",
    scale: 0.5,
  },
  {
    label: "dropout 0.3 in training, causal GQA",
    B: 2,
    H: 2,
    Hkv: 1,
    L: 5,
    S: 5,
    D: 4,
    Dv: 4,
    causal: true,
    scale: 0.5,
    dropout: { rate: 0.3, seed: 7 },
  },
  {
    label: "past one 64-key block: L 70, S 130, causal bottom-right, padding, GQA",
    B: 1,
    H: 4,
    Hkv: 2,
    L: 70,
    S: 130,
    D: 16,
    Dv: 8,
    causal: true,
    alignment: "bottom-right",
    scale: 0.25,
    pad: (_b, j) => (j % 17 === 3 ? 1 : 0),
  },
];

type Made = AttentionGradTensors;

function make(c: Case, seed: number, value?: (rng: ReturnType<typeof createRng>, i: number) => number): Made {
  const rng = createRng(seed);
  const q = randomTensor(rng, [c.B, c.H, c.L, c.D]);
  const k = randomTensor(rng, [c.B, c.Hkv, c.S, c.D]);
  const v = randomTensor(rng, [c.B, c.Hkv, c.S, c.Dv], value);
  const grad = randomTensor(rng, [c.B, c.H, c.L, c.Dv]);
  return attentionGradTensors(c, { q, k, v, grad });
}

/** attention-grad wrt q, k and v (each from `run`), against the float64 gradients `want` of `m`. */
async function expectGrads(
  m: Made,
  want: Parameters<typeof gradsByWrt>[0],
  run: (wrt: QkvWrt) => Promise<Tensor>,
  what: string,
): Promise<void> {
  for (const [wrt, data] of gradsByWrt(want))
    expectClose(await run(wrt), { shape: m.shapeOf(wrt), data }, GRAD_TOL, `attention-grad wrt ${wrt}${what}`);
}

export function attentionGradChecks(ctx: ContractContext): void {
  CASES.forEach((c, n) => {
    it(`attention-lse and attention-grad (q, k, v) equal the unfused chain's backward: ${c.label}`, async () => {
      const m = make(c, 900 + n);
      const wantLse = attentionLse64(m.problem);
      const lse = await ctx.h.run("attention-lse", m.lseAttrs, [m.q, m.k, m.pad], [c.B, c.H, c.L]);
      const lseData = lse.toFloat32Array();
      wantLse.forEach((w, r) => {
        if (w === -Infinity) expect(lseData[r], `lse row ${r} sees no key: −∞`).toBe(-Infinity);
      });
      expectClose(
        lse,
        { shape: [c.B, c.H, c.L], data: wantLse.map((w) => (w === -Infinity ? -Infinity : w)) },
        GRAD_TOL,
        `attention-lse, ${c.label}`,
      );
      const want = attentionGrad64(m.problem, f64(m.grad));
      const run = (wrt: QkvWrt) => ctx.h.run("attention-grad", m.attrs(wrt), attentionGradInputs(m), m.shapeOf(wrt));
      await expectGrads(m, want, run, `, ${c.label}`);
    });
  });

  it("attention-grad on strided values made on the executor (q, k, v, grad transposed back from other layouts)", async () => {
    const c = CASES[1]!;
    const m = make(c, 950);
    const want = attentionGrad64(m.problem, f64(m.grad));
    const perm = [0, 2, 1, 3];
    const [q, k, v, grad] = await Promise.all([m.q, m.k, m.v, m.grad].map((t) => stridedOn(ctx.h, t, perm)));
    const [out, lse] = await Promise.all([ctx.h.upload(m.out), ctx.h.upload(m.lse)]);
    const values = [q, k, v, out, grad, lse, undefined];
    const run = (wrt: QkvWrt) => runValues(ctx.h, "attention-grad", m.attrs(wrt), values, m.shapeOf(wrt));
    await expectGrads(m, want, run, " on strided values");
    const gotLse = await runValues(ctx.h, "attention-lse", m.lseAttrs, [q, k, undefined], [c.B, c.H, c.L]);
    expectClose(
      gotLse,
      { shape: [c.B, c.H, c.L], data: attentionLse64(m.problem) },
      GRAD_TOL,
      "attention-lse on strided values",
    );
  });

  it("rows that see no key get exactly zero dq; keys no query sees get exactly zero dk and dv; nothing is NaN", async () => {
    const c = CASES[3]!; // batch entry 1 fully padded, key 2 padded everywhere
    const m = make(c, 960);
    const finite = async (wrt: QkvWrt): Promise<Float32Array> => {
      const d = await ctx.h.run("attention-grad", m.attrs(wrt), attentionGradInputs(m), m.shapeOf(wrt));
      expect(d.toFloat32Array().every(Number.isFinite), `d${wrt} is finite`).toBe(true);
      return d.toFloat32Array();
    };
    const dq = await finite("q");
    const dk = await finite("k");
    const dv = await finite("v");
    const perB = c.H * c.L * c.D;
    expect(
      dq.subarray(perB).every((x) => x === 0),
      "dq of the fully padded batch entry: exactly 0",
    ).toBe(true);
    for (let b = 0; b < c.B; b++)
      for (let j = 0; j < c.S; j++) {
        if (c.pad!(b, j) !== 1) continue;
        const at = (b * c.Hkv * c.S + j) * c.D;
        expect(
          dk.subarray(at, at + c.D).every((x) => x === 0),
          `dk of padded key ${j} in batch ${b}: exactly 0`,
        ).toBe(true);
        expect(
          dv.subarray(at, at + c.Dv).every((x) => x === 0),
          `dv of padded key ${j} in batch ${b}: exactly 0`,
        ).toBe(true);
      }
  });

  it("a NaN in a padded key's value row reaches no gradient", async () => {
    const c = CASES[3]!;
    const m = make(c, 970, (r, i) => (Math.floor(i / c.Dv) % c.S === 2 ? NaN : r.normal()));
    // The reference with that row zeroed: what the fused backward must give, since no query sees key 2.
    const clean = { ...m.problem, v: m.problem.v.map((x) => (Number.isNaN(x) ? 0 : x)) };
    const want = attentionGrad64(clean, f64(m.grad));
    const out = Tensor.from(Float32Array.from(attentionOut64(clean)), m.out.shape);
    const run = (wrt: QkvWrt) =>
      ctx.h.run("attention-grad", m.attrs(wrt), attentionGradInputs(m, { out }), m.shapeOf(wrt));
    await expectGrads(m, want, run, " with a NaN in a padded value row");
  });

  it("bad calls are typed errors naming the field: wrt, lse's shape, out's shape, a window without causal", async () => {
    const c = CASES[0]!;
    const m = make(c, 980);
    const inputs = [m.q, m.k, m.v, m.out, m.grad, m.lse, m.pad];
    const run = (attrs: object, xs: readonly (Tensor | undefined)[], shape = m.shapeOf("q")) =>
      thrown(() => ctx.h.run("attention-grad", attrs, xs, shape));
    expectTypedError(await run({ ...m.attrs("q"), wrt: "x" }, inputs), "wrt x", /wrt/);
    expectTypedError(
      await run(m.attrs("q"), [m.q, m.k, m.v, m.out, m.grad, Tensor.zeros([c.B, c.H, c.L + 1]), undefined]),
      "lse [B, H, L+1]",
      /\.lse/,
      /\[B, H, L\]/,
    );
    expectTypedError(
      await run(m.attrs("q"), [m.q, m.k, m.v, Tensor.zeros([c.B, c.H, c.L, c.Dv + 1]), m.grad, m.lse, undefined]),
      "out with Dv+1",
      /\.out/,
    );
    expectTypedError(await run({ ...m.attrs("q"), window: 2 }, inputs), "window without causal", /window/);
    expectTypedError(
      await thrown(() =>
        ctx.h.run("attention-lse", { ...m.lseAttrs, scale: NaN }, [m.q, m.k, undefined], [c.B, c.H, c.L]),
      ),
      "lse scale NaN",
      /scale/,
    );
  });
}
