// Proves the optimizer references right without trusting their formulas: multi-step Adam, AdamW and SGD training
// loops built from adamMoment64 / adamStep64 and sgdMomentum64 / sgdStep64 (the way a lowered graph chains the ops)
// against separate, straightforward float64 transcriptions of torch.optim.Adam / AdamW (_single_tensor_adam: lerp
// for the first moment, incremental powers of β for the bias corrections) and torch.optim.SGD (_single_tensor_sgd:
// the buffer cloned from the first gradient, dampening, Nesterov, weight decay, momentum 0 without a buffer), plus
// first steps and moment / buffer updates computed by hand.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { adamMoment64, adamStep64 } from "./optim64.js";

import { type TorchOptions, TorchAdam, OpsAdam, bowlGrad } from "./torch-optim64.js";
import { expectNear, normals } from "./test-values.js";

describe("adamMoment64", () => {
  it("by hand: beta · state + (1 − beta) · g, g² for the second moment, g = grad + weightDecay · param", () => {
    expectNear(
      adamMoment64([0.5, -1], [2, 4], undefined, { beta: 0.9, square: false, weightDecay: 0 }),
      [0.45 + 0.2, -0.9 + 0.4],
      1e-15,
      "first moment",
    );
    expectNear(
      adamMoment64([0.5, 0], [2, -3], undefined, { beta: 0.999, square: true, weightDecay: 0 }),
      [0.4995 + 0.004, 0.009],
      1e-15,
      "second moment",
    );
    // g = 2 + 0.5 · 4 = 4 and g = -3 + 0.5 · (-2) = -4
    expectNear(
      adamMoment64([0.5, 0], [2, -3], [4, -2], { beta: 0.999, square: true, weightDecay: 0.5 }),
      [0.4995 + 0.016, 0.016],
      1e-15,
      "second moment with weight decay",
    );
    expectNear(
      adamMoment64([0.5, 0], [2, -3], [4, -2], { beta: 0.9, square: false, weightDecay: 0 }),
      [0.45 + 0.2, -0.3],
      1e-15,
      "a parameter without weight decay is ignored",
    );
    expect([...adamMoment64([7, 7], [1.5, -2], undefined, { beta: 0, square: true, weightDecay: 0 })]).toEqual([
      2.25, 4,
    ]);
  });

  it("refuses weight decay without the parameter and mismatched lengths", () => {
    expect(() => adamMoment64([0], [1], undefined, { beta: 0.9, square: false, weightDecay: 0.1 })).toThrow(
      /parameter/,
    );
    expect(() => adamMoment64([0, 0], [1], undefined, { beta: 0.9, square: false, weightDecay: 0 })).toThrow(
      /elements/,
    );
    expect(() => adamMoment64([0], [1], undefined, { beta: 1, square: false, weightDecay: 0 })).toThrow(/beta/);
  });
});

describe("adamStep64", () => {
  it("by hand: a first step moves each parameter by lr against the gradient's sign (m̂ = g, v̂ = g²)", () => {
    const g = [0.5, -4, 1e-3];
    const p = [1, -2, 0.25];
    const a = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 0, weightDecay: 0, decoupled: false };
    const m = adamMoment64([0, 0, 0], g, undefined, { beta: 0.9, square: false, weightDecay: 0 });
    const v = adamMoment64([0, 0, 0], g, undefined, { beta: 0.999, square: true, weightDecay: 0 });
    expectNear(m, [0.05, -0.4, 1e-4], 1e-15, "m after one step");
    expectNear(v, [0.00025, 0.016, 1e-9], 1e-15, "v after one step");
    expectNear(adamStep64(p, m, v, 1, a), [0.9, -1.9, 0.15], 1e-15, "Adam's first step, eps 0");
    // eps 1e-3: p − 0.1 · g / (|g| + 1e-3)
    expectNear(
      adamStep64(p, m, v, 1, { ...a, eps: 1e-3 }),
      [1 - 0.05 / 0.501, -2 + 0.4 / 4.001, 0.25 - 1e-4 / 2e-3],
      1e-14,
      "Adam's first step, eps 1e-3",
    );
    // AdamW, weightDecay 0.5: p · (1 − 0.05) first
    expectNear(
      adamStep64(p, m, v, 1, { ...a, weightDecay: 0.5, decoupled: true }),
      [0.95 - 0.1, -1.9 + 0.1, 0.2375 - 0.1],
      1e-15,
      "AdamW's first step",
    );
    // Without `decoupled`, adam-step ignores weightDecay (it went into the moments).
    expectNear(
      adamStep64(p, m, v, 1, { ...a, weightDecay: 0.5 }),
      [0.9, -1.9, 0.15],
      1e-15,
      "Adam ignores weightDecay in the step",
    );
    // beta1 = beta2 = 0: no memory, bias corrections 1, step lr · m / (sqrt(v) + eps)
    expectNear(
      adamStep64([1], [2], [9], 7, { ...a, beta1: 0, beta2: 0, eps: 1 }),
      [1 - 0.1 * 0.5],
      1e-15,
      "betas of 0",
    );
  });

  it("by hand: a second step, bias corrections 1 − 0.9² and 1 − 0.999²", () => {
    // g1 = 0.5, g2 = -1 on p = 1, lr 0.1, eps 0
    const a = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 0, weightDecay: 0, decoupled: false };
    const m2 = 0.9 * 0.05 + 0.1 * -1; // -0.055
    const v2 = 0.999 * 0.00025 + 0.001 * 1; // 0.00124975
    const want = 0.9 - (0.1 / 0.19) * (m2 / (Math.sqrt(v2) / Math.sqrt(0.001999)));
    expectNear(adamStep64([0.9], [m2], [v2], 2, a), [want], 1e-15, "second step");
    expect(want).toBeCloseTo(0.9366101, 6);
  });

  it("with a constant gradient every step moves by lr · g / (|g| + eps) (the bias corrections are exact)", () => {
    const a = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 0, weightDecay: 0, decoupled: false };
    const g = [0.3, -7];
    let m: Float64Array = new Float64Array(2);
    let v: Float64Array = new Float64Array(2);
    let p: Float64Array = Float64Array.of(0, 0);
    for (let t = 1; t <= 50; t++) {
      m = adamMoment64(m, g, undefined, { beta: a.beta1, square: false, weightDecay: 0 });
      v = adamMoment64(v, g, undefined, { beta: a.beta2, square: true, weightDecay: 0 });
      p = adamStep64(p, m, v, t, a);
      expectNear(p, [-0.01 * t, 0.01 * t], 1e-13, `step ${t}`);
    }
  });

  it("refuses a step that is not an integer >= 1 with an AttnGraphError naming step", () => {
    const a = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false };
    for (const t of [0, -1, 1.5, NaN, Infinity]) {
      let e: unknown;
      try {
        adamStep64([1], [1], [1], t, a);
      } catch (err) {
        e = err;
      }
      expect(AttnGraphError.isInstance(e), `step ${t}`).toBe(true);
      expect((e as Error).message, `step ${t}`).toMatch(/^step:/);
    }
    expect(adamStep64([1], [0], [0], 1e6, { ...a, eps: 1e-8 })[0]).toBe(1); // large t: beta^t underflows to 0
  });
});

describe("a training loop built from adamMoment64 and adamStep64 equals torch.optim.Adam / AdamW", () => {
  const shapes = [37, 12, 5];
  const cases: { label: string; options: TorchOptions; adamW: boolean }[] = [
    {
      label: "Adam, torch defaults",
      options: { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0 },
      adamW: false,
    },
    {
      label: "Adam, weight_decay 0.1 (L2 in the gradient)",
      options: { lr: 0.05, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.1 },
      adamW: false,
    },
    {
      label: "Adam, betas (0.5, 0.9), eps 1e-3",
      options: { lr: 0.02, betas: [0.5, 0.9], eps: 1e-3, weight_decay: 0 },
      adamW: false,
    },
    {
      label: "AdamW, torch defaults (weight_decay 0.01)",
      options: { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.01 },
      adamW: true,
    },
    {
      label: "AdamW, lr 0.05, weight_decay 0.3",
      options: { lr: 0.05, betas: [0.8, 0.99], eps: 1e-6, weight_decay: 0.3 },
      adamW: true,
    },
    {
      label: "AdamW, weight_decay 0 (Adam)",
      options: { lr: 0.05, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0 },
      adamW: true,
    },
  ];
  cases.forEach(({ label, options, adamW }, n) => {
    it(`${label}: 40 steps on a noisy quadratic, three parameters`, () => {
      const init = shapes.map((len, k) => normals(100 * n + k, len));
      const centres = shapes.map((len, k) => normals(100 * n + 10 + k, len, 2));
      const curvature = shapes.map((len, k) => normals(100 * n + 20 + k, len).map((x) => 0.1 + x * x));
      const torch = new TorchAdam(
        init.map((p) => Float64Array.from(p)),
        options,
        adamW,
      );
      const ops = new OpsAdam(
        init.map((p) => Float64Array.from(p)),
        {
          lr: options.lr,
          beta1: options.betas[0],
          beta2: options.betas[1],
          eps: options.eps,
          weightDecay: options.weight_decay,
          decoupled: adamW,
        },
      );
      let moved = 0;
      for (let t = 1; t <= 40; t++) {
        const noise = shapes.map((len, k) => normals(1000 * t + 100 * n + k, len, 0.1));
        torch.update(torch.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.update(ops.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.params.forEach((p, k) =>
          expectNear(p, torch.params[k]!, 1e-12, `${label}: parameter ${k} after step ${t}`),
        );
      }
      ops.params.forEach((p, k) => p.forEach((x, i) => (moved = Math.max(moved, Math.abs(x - init[k]![i]!)))));
      expect(moved, "the loop really moved the parameters").toBeGreaterThan(options.lr);
    });
  });
});
