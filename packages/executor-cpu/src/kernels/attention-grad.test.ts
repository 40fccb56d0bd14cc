// The fused attention backward (attention-lse, attention-grad) against the testkit's float64 references of the unfused
// chain, and against central differences of the float64 forward. Sizes cross the kernels' 64-row/64-key blocks on
// purpose; inputs come in the strided [B, T, n, D] → [B, n, T, D] layout the standard builder hands over.
import { describe, expect, it } from "vitest";
import { Tensor, compare, type Tolerance } from "@attngraph/tensor";
import type { AttentionGradAttrs } from "@attngraph/graph";
import {
  attentionGrad64,
  attentionGradInputs,
  attentionGradTensors,
  attentionLse64,
  attentionOut64,
  gradsByWrt,
  randomTensor,
  type AttentionGradCase,
  type AttentionGradTensors,
  type AttentionProblem64,
} from "@attngraph/testkit";
import { thrownSubject as subject } from "@attngraph/testkit/test-helpers";
import { createCpuExecutor } from "../register-kernels.js";
import { heads } from "../test-heads.js";

const ex = createCpuExecutor();
const TOL: Tolerance = { abs: 5e-5, rel: 5e-4 };

const f64 = (t: Tensor): Float64Array => Float64Array.from(t.toFloat32Array());

type Case = AttentionGradCase;

type Made = AttentionGradTensors;

/** Strided random inputs; `out` and `lse` are the float64 references' values in float32 (what the forward gives). */
function make(c: Case, seed: number): Made {
  const q = heads(c.B, c.H, c.L, c.D, seed);
  const k = heads(c.B, c.Hkv, c.S, c.D, seed + 1);
  const v = heads(c.B, c.Hkv, c.S, c.Dv, seed + 2);
  const grad = heads(c.B, c.H, c.L, c.Dv, seed + 3);
  return attentionGradTensors(c, { q, k, v, grad });
}

const runLse = (m: Made, c: Case, q = m.q, k = m.k, out?: Tensor) =>
  ex.dispatch({
    kind: "attention-lse",
    node: "attn.lse",
    attrs: { ...m.lseAttrs },
    inputs: [q, k, m.pad],
    outShape: [c.B, c.H, c.L],
    ...(out ? { out } : {}),
  });

const runGrad = (
  m: Made,
  wrt: AttentionGradAttrs["wrt"],
  over: Partial<Record<"q" | "k" | "v" | "out" | "grad" | "lse", Tensor>> = {},
  out?: Tensor,
) =>
  ex.dispatch({
    kind: "attention-grad",
    node: `attn.d${wrt}`,
    attrs: { ...m.attrs(wrt) },
    inputs: attentionGradInputs<Tensor>(m, over),
    outShape: m.shapeOf(wrt),
    ...(out ? { out } : {}),
  });

function expectNear(got: Tensor, want: ArrayLike<number>, what: string, tol = TOL): void {
  const r = compare(got, want, tol);
  expect(r.ok, `${what}: ${JSON.stringify(r.worst)}`).toBe(true);
}

function expectMatchesReference(c: Case, seed: number): void {
  const m = make(c, seed);
  const lse = runLse(m, c);
  expect(lse.shape).toEqual([c.B, c.H, c.L]);
  expectNear(lse, attentionLse64(m.problem), "lse");
  const want = attentionGrad64(m.problem, f64(m.grad));
  for (const [wrt, data] of gradsByWrt(want)) {
    const got = runGrad(m, wrt);
    expect(got.shape).toEqual(m.shapeOf(wrt));
    expectNear(got, data, `d${wrt}`);
  }
}

describe("attention-lse and attention-grad kernels", () => {
  it("match the testkit's float64 references of the unfused chain (plain, H = Hkv)", () => {
    expectMatchesReference({ B: 1, H: 2, Hkv: 2, L: 5, S: 7, D: 4, Dv: 4, scale: 0.5 }, 1);
  });

  it("GQA (H = 6 over Hkv = 2), causal, Dv != D: key and value gradients sum over the query heads of a group", () => {
    expectMatchesReference({ B: 2, H: 6, Hkv: 2, L: 9, S: 9, D: 8, Dv: 5, causal: true, scale: 1 / Math.sqrt(8) }, 11);
  });

  it("MQA across several 64-blocks: causal window, bottom-right, padding and dropout", () => {
    const c: Case = {
      B: 1,
      H: 3,
      Hkv: 1,
      L: 130,
      S: 150,
      D: 12,
      Dv: 7,
      causal: true,
      window: 45,
      alignment: "bottom-right",
      scale: 0.3,
      pad: (_b, j) => (j % 13 === 5 ? 1 : 0),
      dropout: { rate: 0.25, seed: 1234 },
    };
    expectMatchesReference(c, 21);
  });

  it("equals central differences of the float64 forward (the loss Σ grad ⊙ out)", () => {
    const c: Case = {
      B: 1,
      H: 2,
      Hkv: 1,
      L: 4,
      S: 5,
      D: 3,
      Dv: 2,
      causal: true,
      alignment: "bottom-right",
      scale: 0.8,
    };
    const m = make(c, 31);
    const g = f64(m.grad);
    const loss = (p: AttentionProblem64) => attentionOut64(p).reduce((s, o, e) => s + o * g[e]!, 0);
    const eps = 1e-5;
    for (const wrt of ["q", "k", "v"] as const) {
      const base = m.problem[wrt];
      const numeric = Array.from(base, (_, e) => {
        const plus = Float64Array.from(base);
        const minus = Float64Array.from(base);
        plus[e]! += eps;
        minus[e]! -= eps;
        return (loss({ ...m.problem, [wrt]: plus }) - loss({ ...m.problem, [wrt]: minus })) / (2 * eps);
      });
      expectNear(runGrad(m, wrt), numeric, `d${wrt} vs central differences`, { abs: 1e-4, rel: 1e-3 });
    }
  });

  it("rows without keys: lse exactly −∞, dq exactly +0, never NaN, even with NaN in what those rows would read", () => {
    // Bottom-right causal with L > S: query rows 0..2 see no key; batch entry 1 is fully padded.
    const c: Case = {
      B: 2,
      H: 2,
      Hkv: 1,
      L: 6,
      S: 3,
      D: 4,
      Dv: 3,
      causal: true,
      alignment: "bottom-right",
      scale: 0.5,
      pad: (b) => (b === 1 ? 1 : 0),
    };
    const m = make(c, 41);
    const lse = runLse(m, c).toFloat32Array();
    const seesNone = (b: number, i: number) => b === 1 || i < c.L - c.S;
    for (let b = 0; b < c.B; b++)
      for (let h = 0; h < c.H; h++)
        for (let i = 0; i < c.L; i++) {
          const x = lse[(b * c.H + h) * c.L + i]!;
          if (seesNone(b, i)) expect(x, `lse [${b}, ${h}, ${i}]`).toBe(-Infinity);
          else expect(Number.isFinite(x)).toBe(true);
        }
    // A NaN in the gradient and output rows of the rows that see nothing, and in the padded keys' q·k inputs.
    const grad = m.grad.contiguous();
    const out = m.out.contiguous();
    for (let b = 0; b < c.B; b++)
      for (let h = 0; h < c.H; h++)
        for (let i = 0; i < c.L; i++) {
          if (!seesNone(b, i)) continue;
          const at = ((b * c.H + h) * c.L + i) * c.Dv;
          grad.data.fill(NaN, at, at + c.Dv);
          out.data.fill(NaN, at, at + c.Dv);
        }
    const want = attentionGrad64(m.problem, f64(m.grad));
    const dq = runGrad(m, "q", { grad, out });
    const dk = runGrad(m, "k", { grad, out });
    const dv = runGrad(m, "v", { grad, out });
    for (const [name, t] of [
      ["dq", dq],
      ["dk", dk],
      ["dv", dv],
    ] as const)
      expect(t.toFloat32Array().every(Number.isFinite), `${name} finite`).toBe(true);
    const dqd = dq.toFloat32Array();
    for (let b = 0; b < c.B; b++)
      for (let h = 0; h < c.H; h++)
        for (let i = 0; i < c.L; i++) {
          if (!seesNone(b, i)) continue;
          const at = ((b * c.H + h) * c.L + i) * c.D;
          expect(
            Array.from(dqd.subarray(at, at + c.D)).every((x) => Object.is(x, 0)),
            `dq row [${b}, ${h}, ${i}] is +0`,
          ).toBe(true);
        }
    // The fully padded batch entry's keys: exactly 0.
    const perB = c.Hkv * c.S;
    expect(
      dk
        .toFloat32Array()
        .subarray(perB * c.D)
        .every((x) => x === 0),
    ).toBe(true);
    expect(
      dv
        .toFloat32Array()
        .subarray(perB * c.Dv)
        .every((x) => x === 0),
    ).toBe(true);
    // And the rest is the reference's (computed from the clean rows, which those NaN never reach).
    expectNear(dq, want.dq, "dq");
    expectNear(dk, want.dk, "dk");
    expectNear(dv, want.dv, "dv");
  });

  it("a NaN or ±∞ in a hidden key's k or v row reaches no gradient", () => {
    const c: Case = {
      B: 1,
      H: 2,
      Hkv: 1,
      L: 5,
      S: 6,
      D: 4,
      Dv: 4,
      scale: 0.5,
      causal: true,
      pad: (_b, j) => (j === 1 ? 1 : 0),
    };
    const m = make(c, 51);
    const k = m.k.contiguous();
    const v = m.v.contiguous();
    k.data[1 * c.D + 2] = NaN; // key 1: padded
    v.data[1 * c.Dv] = Infinity;
    k.data[5 * c.D] = -Infinity; // key 5: hidden by causal from every query (L = 5, top-left)
    v.data[5 * c.Dv + 3] = NaN;
    const want = attentionGrad64(m.problem, f64(m.grad));
    for (const [wrt, data] of gradsByWrt(want)) {
      const got = runGrad(m, wrt, { k, v });
      const key = wrt === "q" ? undefined : got.toFloat32Array();
      if (key)
        for (const j of [1, 5])
          expect(
            Array.from(key.subarray(j * got.shape[3]!, (j + 1) * got.shape[3]!)).every((x) => x === 0),
            `d${wrt} of key ${j}`,
          ).toBe(true);
      expectNear(got, data, `d${wrt}`);
    }
  });

  it("a NaN score makes its row's lse and gradient NaN, and only its row's dq", () => {
    const c: Case = { B: 1, H: 1, Hkv: 1, L: 3, S: 4, D: 4, Dv: 4, scale: 0.5 };
    const m = make(c, 91);
    const q = m.q.contiguous();
    q.data[1 * c.D + 2] = NaN; // query row 1
    const lse = runLse(m, c, q).toFloat32Array();
    expect(lse[1]).toBeNaN();
    expect(Number.isFinite(lse[0]!) && Number.isFinite(lse[2]!)).toBe(true);
    const dq = runGrad(m, "q", { q, lse: Tensor.from(lse, [1, 1, 3]) }).toFloat32Array();
    expect(Array.from(dq.subarray(c.D, 2 * c.D)).every(Number.isNaN)).toBe(true);
    expect([...dq.subarray(0, c.D), ...dq.subarray(2 * c.D)].every(Number.isFinite)).toBe(true);
  });

  it("backs the executor's own forward: lse from attention-lse, out from attention", () => {
    const c: Case = {
      B: 2,
      H: 4,
      Hkv: 2,
      L: 70,
      S: 70,
      D: 16,
      Dv: 16,
      causal: true,
      scale: 0.25,
      dropout: { rate: 0.1, seed: 9 },
    };
    const m = make(c, 61);
    const lse = runLse(m, c);
    const { wrt: _grad, ...forward } = m.attrs("q"); // the forward takes the same attributes but wrt
    const out = ex.dispatch({
      kind: "attention",
      node: "attn",
      attrs: forward,
      inputs: [m.q, m.k, m.v, m.pad],
      outShape: [c.B, c.H, c.L, c.Dv],
    });
    const want = attentionGrad64(m.problem, f64(m.grad));
    for (const [wrt, data] of gradsByWrt(want)) expectNear(runGrad(m, wrt, { lse, out }), data, `d${wrt}`);
  });

  it("writes every element of a planned output (keys no query sees included), and returns it", () => {
    const c: Case = { B: 1, H: 2, Hkv: 2, L: 3, S: 8, D: 4, Dv: 4, causal: true, scale: 0.5 }; // keys 3..7 unseen
    const m = make(c, 71);
    for (const wrt of ["q", "k", "v"] as const) {
      const plain = runGrad(m, wrt);
      const out = new Tensor(new Float32Array(plain.size).fill(NaN), m.shapeOf(wrt));
      const got = runGrad(m, wrt, {}, out);
      expect(got).toBe(out);
      expect(Array.from(got.toFloat32Array())).toEqual(Array.from(plain.toFloat32Array()));
      if (wrt !== "q") {
        const w = got.shape[3]!;
        for (let h = 0; h < c.Hkv; h++) {
          const keys = got.toFloat32Array().subarray((h * c.S + c.L) * w, (h + 1) * c.S * w);
          expect(
            keys.every((x) => x === 0),
            `d${wrt} of the keys no query sees, head ${h}`,
          ).toBe(true);
        }
      }
    }
    const lseOut = new Tensor(new Float32Array(c.B * c.H * c.L).fill(NaN), [c.B, c.H, c.L]);
    expect(m.pad).toBeUndefined();
    const lse = runLse(m, c, m.q, m.k, lseOut);
    expect(lse).toBe(lseOut);
    expectNear(lse, attentionLse64(m.problem), "lse");
  });

  it("bad calls are typed errors naming the field: padding values, wrt, shapes", () => {
    const c: Case = { B: 1, H: 2, Hkv: 1, L: 3, S: 4, D: 4, Dv: 4, scale: 0.5 };
    const m = make(c, 81);
    const badPad = Tensor.from([0, 2, 0, 1], [1, 4]);
    const inputs = [m.q, m.k, m.v, m.out, m.grad, m.lse, badPad];
    const noLse = [m.q, m.k, m.v, m.out, m.grad, undefined, undefined];
    const wrongK = randomTensor([1, 3, 4, 4], 1); // Hkv = 3 does not divide H = 2
    const lse = (lseInputs: (Tensor | undefined)[]) =>
      ({ kind: "attention-lse", node: "a", attrs: { ...m.lseAttrs }, inputs: lseInputs, outShape: [1, 2, 3] }) as const;
    const grad = (attrs: Record<string, unknown>, gradInputs: (Tensor | undefined)[]) =>
      ({ kind: "attention-grad", node: "g", attrs, inputs: gradInputs, outShape: [1, 2, 3, 4] }) as const;
    for (const [call, field] of [
      [lse([m.q, m.k, badPad]), "a.keyPaddingMask"],
      [grad({ ...m.attrs("q") }, inputs), "g.keyPaddingMask"],
      [grad({ ...m.attrs("q"), wrt: "out" }, inputs), "g.wrt"],
      [grad({ ...m.attrs("q") }, noLse), "g.lse"],
      [lse([m.q, wrongK, undefined]), "a.k"],
    ] as const)
      expect(subject(() => ex.dispatch(call))).toBe(field);
  });
});
