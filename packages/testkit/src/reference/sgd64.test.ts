// (SGD) Proves the optimizer references right without trusting their formulas: multi-step Adam, AdamW and SGD training
// loops built from adamMoment64 / adamStep64 and sgdMomentum64 / sgdStep64 (the way a lowered graph chains the ops)
// against separate, straightforward float64 transcriptions of torch.optim.Adam / AdamW (_single_tensor_adam: lerp
// for the first moment, incremental powers of β for the bias corrections) and torch.optim.SGD (_single_tensor_sgd:
// the buffer cloned from the first gradient, dampening, Nesterov, weight decay, momentum 0 without a buffer), plus
// first steps and moment / buffer updates computed by hand.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { sgdMomentum64, sgdStep64 } from "./optim64.js";

import { bowlGrad, TorchSGD, OpsSGD, type TorchSgdOptions } from "./torch-optim64.js";
import { expectNear, normals } from "./test-values.js";

describe("sgdMomentum64", () => {
  it("by hand: d at step 1 (the buffer not read, NaN included), momentum · buf + (1 − dampening) · d after, d = grad + weightDecay · param", () => {
    const a = { momentum: 0.9, dampening: 0.3, weightDecay: 0.5 };
    // d = 0.5 + 0.5 · 2 = 1.5 and d = -4 + 0.5 · (-1) = -4.5
    expect([...sgdMomentum64([NaN, 7], [0.5, -4], [2, -1], 1, a)]).toEqual([1.5, -4.5]);
    expect([...sgdMomentum64([Infinity, -Infinity], [0.5, -4], undefined, 1, { ...a, weightDecay: 0 })]).toEqual([
      0.5, -4,
    ]);
    // d = [1.5, 3.5]: 0.9 · 1 + 0.9 · 1.5 and 0.9 · (-2) + 0.9 · 3.5
    expectNear(
      sgdMomentum64([1, -2], [0.5, 4], [2, -1], 2, { momentum: 0.9, dampening: 0.1, weightDecay: 0.5 }),
      [2.25, 1.35],
      1e-15,
      "step 2 with dampening and weight decay",
    );
    expectNear(
      sgdMomentum64([1, -2], [0.5, 4], undefined, 7, { momentum: 0.9, dampening: 0, weightDecay: 0 }),
      [1.4, 2.2],
      1e-15,
      "torch's defaults but momentum",
    );
    expectNear(
      sgdMomentum64([1, -2], [0.5, 4], [2, -1], 7, { momentum: 0.9, dampening: 0, weightDecay: 0 }),
      [1.4, 2.2],
      1e-15,
      "a parameter without weight decay is ignored",
    );
    expectNear(
      sgdMomentum64([5, 5], [2, -4], undefined, 3, { momentum: 0, dampening: 0.25, weightDecay: 0 }),
      [1.5, -3],
      1e-15,
      "momentum 0: (1 − dampening) · d",
    );
    expectNear(
      sgdMomentum64([2, -4], [3, 3], undefined, 5, { momentum: 0.5, dampening: 1, weightDecay: 0 }),
      [1, -2],
      1e-15,
      "dampening 1: momentum · buf",
    );
    expectNear(
      sgdMomentum64([2, -4], [3, 3], undefined, 1, { momentum: 0.5, dampening: 1, weightDecay: 0 }),
      [3, 3],
      1e-15,
      "dampening 1 at step 1: still d",
    );
    expectNear(
      sgdMomentum64([1], [0.5], undefined, 1e6, { momentum: 0.9, dampening: 0, weightDecay: 0 }),
      [1.4],
      1e-15,
      "a large step is any step after the first",
    );
  });

  it("refuses weight decay without the parameter, mismatched lengths and attributes out of range", () => {
    const a = { momentum: 0.9, dampening: 0, weightDecay: 0 };
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, weightDecay: 0.1 })).toThrow(/parameter/);
    expect(() => sgdMomentum64([0, 0], [1], undefined, 2, a)).toThrow(/elements/);
    expect(() => sgdMomentum64([0], [1], [1, 2], 2, a)).toThrow(/elements/);
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, momentum: -0.1 })).toThrow(/momentum/);
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, dampening: 1.5 })).toThrow(/dampening/);
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, dampening: -0.5 })).toThrow(/dampening/);
  });

  it("refuses a step that is not an integer >= 1 with an AttnGraphError naming step", () => {
    for (const t of [0, -1, 1.5, NaN, Infinity]) {
      let e: unknown;
      try {
        sgdMomentum64([1], [1], undefined, t, { momentum: 0.9, dampening: 0, weightDecay: 0 });
      } catch (err) {
        e = err;
      }
      expect(AttnGraphError.isInstance(e), `step ${t}`).toBe(true);
      expect((e as Error).message, `step ${t}`).toMatch(/^step:/);
    }
  });
});

describe("sgdStep64", () => {
  const p = [1, -2, 0.25];
  const g = [0.5, -4, 1e-3];
  const buf = [2, -1, 0];
  const plain = { lr: 0.1, momentum: 0, nesterov: false, weightDecay: 0 };

  it("by hand: param − lr · u, u = d, buf or d + momentum · buf, d = grad + weightDecay · param", () => {
    expectNear(sgdStep64(p, g, undefined, plain), [0.95, -1.6, 0.2499], 1e-15, "plain SGD");
    // d = [1, -5, 0.126]
    expectNear(
      sgdStep64(p, g, undefined, { ...plain, weightDecay: 0.5 }),
      [0.9, -1.5, 0.2374],
      1e-15,
      "plain SGD with weight decay",
    );
    expectNear(
      sgdStep64(p, g, [NaN, NaN, NaN], plain),
      [0.95, -1.6, 0.2499],
      1e-15,
      "momentum 0: a buffer given is not read",
    );
    expectNear(sgdStep64(p, g, buf, { ...plain, momentum: 0.9 }), [0.8, -1.9, 0.25], 1e-15, "momentum: u = buf");
    expectNear(
      sgdStep64(p, g, buf, { ...plain, momentum: 0.9, weightDecay: 0.5 }),
      [0.8, -1.9, 0.25],
      1e-15,
      "momentum: weight decay went into the buffer",
    );
    // u = d + 0.9 · buf = [2.3, -4.9, 1e-3]
    expectNear(
      sgdStep64(p, g, buf, { ...plain, momentum: 0.9, nesterov: true }),
      [0.77, -1.51, 0.2499],
      1e-15,
      "Nesterov",
    );
    // u = [1, -5, 0.126] + 0.9 · buf = [2.8, -5.9, 0.126]
    expectNear(
      sgdStep64(p, g, buf, { ...plain, momentum: 0.9, nesterov: true, weightDecay: 0.5 }),
      [0.72, -1.41, 0.2374],
      1e-15,
      "Nesterov with weight decay",
    );
  });

  it("by hand: two steps with momentum 0.9 on g1 = 0.5, g2 = -1 from p = 1, lr 0.1 (heavy ball and Nesterov)", () => {
    for (const nesterov of [false, true]) {
      const a = { lr: 0.1, momentum: 0.9, nesterov, weightDecay: 0 };
      const m = { momentum: 0.9, dampening: 0, weightDecay: 0 };
      const b1 = sgdMomentum64([NaN], [0.5], undefined, 1, m);
      const p1 = sgdStep64([1], [0.5], b1, a);
      const b2 = sgdMomentum64(b1, [-1], undefined, 2, m);
      const p2 = sgdStep64(p1, [-1], b2, a);
      expectNear(b1, [0.5], 1e-15, "buffer after step 1");
      expectNear(b2, [-0.55], 1e-15, "buffer after step 2");
      // heavy ball: 1 − 0.05 = 0.95, then 0.95 + 0.055; Nesterov: 1 − 0.1 · 0.95 = 0.905, then 0.905 + 0.1 · 1.495
      expectNear(p1, [nesterov ? 0.905 : 0.95], 1e-15, `${nesterov ? "Nesterov" : "heavy ball"} step 1`);
      expectNear(p2, [nesterov ? 1.0545 : 1.005], 1e-15, `${nesterov ? "Nesterov" : "heavy ball"} step 2`);
    }
  });

  it("with a constant gradient the buffer is g · (1 − m^t)/(1 − m) and the parameter follows the geometric sums", () => {
    const m = 0.8;
    const g = [0.3, -7];
    const geo = (k: number): number => (1 - m ** k) / (1 - m);
    for (const nesterov of [false, true]) {
      const a = { lr: 0.01, momentum: m, nesterov, weightDecay: 0 };
      let b: Float64Array = new Float64Array(2).fill(NaN);
      let p: Float64Array = Float64Array.of(0, 0);
      let sum = 0;
      for (let t = 1; t <= 50; t++) {
        b = sgdMomentum64(b, g, undefined, t, { momentum: m, dampening: 0, weightDecay: 0 });
        p = sgdStep64(p, g, b, a);
        sum += nesterov ? geo(t + 1) : geo(t);
        expectNear(
          b,
          g.map((x) => x * geo(t)),
          1e-13,
          `buffer at step ${t}`,
        );
        expectNear(
          p,
          g.map((x) => -0.01 * x * sum),
          1e-13,
          `${nesterov ? "Nesterov" : "heavy ball"} step ${t}`,
        );
      }
    }
  });

  it("refuses Nesterov without momentum, momentum without the buffer, lr <= 0 and mismatched lengths", () => {
    expect(() => sgdStep64([1], [1], undefined, { ...plain, nesterov: true })).toThrow(/Nesterov/);
    expect(() => sgdStep64([1], [1], undefined, { ...plain, momentum: 0.9 })).toThrow(/buffer/);
    expect(() => sgdStep64([1], [1], undefined, { ...plain, lr: 0 })).toThrow(/lr/);
    expect(() => sgdStep64([1], [1], undefined, { ...plain, weightDecay: -1 })).toThrow(/weightDecay/);
    expect(() => sgdStep64([1, 2], [1], undefined, plain)).toThrow(/elements/);
    expect(() => sgdStep64([1], [1], [1, 2], { ...plain, momentum: 0.9 })).toThrow(/elements/);
  });
});

describe("a training loop built from sgdMomentum64 and sgdStep64 equals torch.optim.SGD", () => {
  const shapes = [37, 12, 5];
  const cases: { label: string; options: TorchSgdOptions }[] = [
    {
      label: "plain SGD (momentum 0, no buffer)",
      options: { lr: 0.02, momentum: 0, dampening: 0, weight_decay: 0, nesterov: false },
    },
    {
      label: "plain SGD, weight_decay 0.1",
      options: { lr: 0.02, momentum: 0, dampening: 0, weight_decay: 0.1, nesterov: false },
    },
    { label: "momentum 0.9", options: { lr: 0.02, momentum: 0.9, dampening: 0, weight_decay: 0, nesterov: false } },
    {
      label: "momentum 0.9, dampening 0.1, weight_decay 0.01",
      options: { lr: 0.02, momentum: 0.9, dampening: 0.1, weight_decay: 0.01, nesterov: false },
    },
    {
      label: "momentum 0.99, dampening 0.5",
      options: { lr: 0.01, momentum: 0.99, dampening: 0.5, weight_decay: 0, nesterov: false },
    },
    {
      label: "momentum 0.5, dampening 1 (the first gradient, decaying)",
      options: { lr: 0.05, momentum: 0.5, dampening: 1, weight_decay: 0, nesterov: false },
    },
    {
      label: "Nesterov, momentum 0.9, weight_decay 0.05",
      options: { lr: 0.02, momentum: 0.9, dampening: 0, weight_decay: 0.05, nesterov: true },
    },
    {
      label: "Nesterov, momentum 0.5",
      options: { lr: 0.05, momentum: 0.5, dampening: 0, weight_decay: 0, nesterov: true },
    },
  ];
  cases.forEach(({ label, options }, n) => {
    it(`${label}: 40 steps on a noisy quadratic, three parameters`, () => {
      const init = shapes.map((len, k) => normals(5000 + 100 * n + k, len));
      const centres = shapes.map((len, k) => normals(5000 + 100 * n + 10 + k, len, 2));
      const curvature = shapes.map((len, k) => normals(5000 + 100 * n + 20 + k, len).map((x) => 0.1 + x * x));
      const torch = new TorchSGD(
        init.map((p) => Float64Array.from(p)),
        options,
      );
      const ops = new OpsSGD(
        init.map((p) => Float64Array.from(p)),
        { lr: options.lr, momentum: options.momentum, nesterov: options.nesterov, weightDecay: options.weight_decay },
        options.dampening,
      );
      let moved = 0;
      for (let t = 1; t <= 40; t++) {
        const noise = shapes.map((len, k) => normals(90000 + 1000 * t + 100 * n + k, len, 0.1));
        torch.update(torch.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.update(ops.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.params.forEach((p, k) =>
          expectNear(p, torch.params[k]!, 1e-12, `${label}: parameter ${k} after step ${t}`),
        );
        ops.params.forEach((p, k) =>
          expect(p.every(Number.isFinite), `${label}: parameter ${k} finite after step ${t}`).toBe(true),
        );
      }
      ops.params.forEach((p, k) => p.forEach((x, i) => (moved = Math.max(moved, Math.abs(x - init[k]![i]!)))));
      expect(moved, "the loop really moved the parameters").toBeGreaterThan(options.lr);
    });
  });

  it("torch refuses Nesterov with dampening, and so does the transcription", () => {
    expect(
      () =>
        new TorchSGD([new Float64Array(1)], {
          lr: 0.1,
          momentum: 0.9,
          dampening: 0.1,
          weight_decay: 0,
          nesterov: true,
        }),
    ).toThrow(/Nesterov/);
  });
});
