// Proves the fused attention backward's references right without trusting their composition: attentionGrad64 against
// central finite differences of Σ grad ⊙ attentionOut64 (every mask geometry, GQA, dropout, a row that sees no key),
// and attentionLse64 against the log of the softmax's denominator taken from the forward's weights.
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../prng.js";
import { attentionGrad64, attentionLse64, attentionOut64, type AttentionProblem64 } from "./attention-grad64.js";
import { mask64, score64 } from "./ops64.js";

function normals(seed: number, n: number): Float64Array {
  const u = mulberry32(seed);
  return Float64Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

const PROBLEMS: readonly [string, Omit<AttentionProblem64, "q" | "k" | "v">][] = [
  [
    "causal GQA, Dv != D",
    {
      dims: { B: 1, H: 4, Hkv: 2, L: 4, S: 4, D: 3, Dv: 2 },
      mask: { causal: true, window: null, alignment: "top-left" },
      scale: 0.6,
    },
  ],
  [
    "window, bottom-right, L > S (rows without keys)",
    {
      dims: { B: 1, H: 2, Hkv: 1, L: 5, S: 3, D: 2, Dv: 3 },
      mask: { causal: true, window: 2, alignment: "bottom-right" },
      scale: 0.9,
    },
  ],
  [
    "key padding and dropout",
    {
      dims: { B: 2, H: 2, Hkv: 2, L: 3, S: 4, D: 2, Dv: 2 },
      mask: { causal: false, window: null, alignment: "top-left" },
      scale: 0.5,
      pad: Float64Array.from([0, 1, 0, 0, 1, 1, 1, 1]),
      dropout: { rate: 0.4, seed: 5 },
    },
  ],
];

describe("attention-grad64 and attention-lse64", () => {
  PROBLEMS.forEach(([label, base], n) => {
    it(`gradients of Σ grad ⊙ out equal central differences: ${label}`, () => {
      const { B, H, Hkv, L, S, D, Dv } = base.dims;
      const p: AttentionProblem64 = {
        ...base,
        q: normals(10 + n, B * H * L * D),
        k: normals(20 + n, B * Hkv * S * D),
        v: normals(30 + n, B * Hkv * S * Dv),
      };
      const grad = normals(40 + n, B * H * L * Dv);
      const loss = (q: Float64Array, k: Float64Array, v: Float64Array): number =>
        attentionOut64({ ...p, q, k, v }).reduce((s, o, e) => s + o * grad[e]!, 0);
      const got = attentionGrad64(p, grad);
      const h = 1e-6;
      const check = (name: string, x: Float64Array, analytic: Float64Array, at: (y: Float64Array) => number): void => {
        for (let e = 0; e < x.length; e++) {
          const up = Float64Array.from(x);
          const down = Float64Array.from(x);
          up[e]! += h;
          down[e]! -= h;
          const numeric = (at(up) - at(down)) / (2 * h);
          expect(Math.abs(analytic[e]! - numeric), `${name}[${e}]: ${analytic[e]} vs ${numeric}`).toBeLessThan(
            1e-6 + 1e-6 * Math.abs(numeric),
          );
        }
      };
      check("dq", p.q, got.dq, (y) => loss(y, p.k, p.v));
      check("dk", p.k, got.dk, (y) => loss(p.q, y, p.v));
      check("dv", p.v, got.dv, (y) => loss(p.q, p.k, y));
    });
  });

  it("lse is the log of each row's softmax denominator; −∞ exactly for a row that sees no key", () => {
    const [, base] = PROBLEMS[1]!;
    const { B, H, Hkv, L, S, D } = base.dims;
    const q = normals(50, B * H * L * D);
    const k = normals(51, B * Hkv * S * D);
    const lse = attentionLse64({ ...base, q, k });
    const masked = mask64(score64(q, k, { B, H, Hkv, L, S, D }), B, H, L, S, base.mask);
    for (let r = 0; r < B * H * L; r++) {
      let sum = 0;
      for (let j = 0; j < S; j++) sum += Math.exp(base.scale * masked[r * S + j]!);
      if (sum === 0) expect(lse[r]).toBe(-Infinity);
      else expect(Math.abs(lse[r]! - Math.log(sum))).toBeLessThan(1e-12);
    }
    expect(
      lse.some((x) => x === -Infinity),
      "the problem has rows without keys",
    ).toBe(true);
  });
});
