// The optimizer ops against their float64 references (reference/optim64.ts, itself proven against transcriptions of
// torch.optim.Adam / AdamW / SGD): adam-moment (first and second moments, weight decay folded in, param absent) and
// adam-step (Adam and AdamW, the step t as [] and [1], t from 1 to 1e6, betas of 0, moments of 0); sgd-momentum
// (momentum, dampening from 0 to 1, weight decay, param absent, momentum 0, the step t as [] and [1], the buffer
// ignored at t = 1 even when NaN or infinite) and sgd-step (plain, weight decay, heavy ball, Nesterov, a buffer given
// with momentum 0); each on random data as dense tensors, strided host views and transposed values made on the
// executor; five chained training steps whose outputs feed the next step, the step read from a view (a slice of a
// steps tensor, a reshape of it); and invalid steps (0, 1.5, -2, NaN) for adam-step and sgd-momentum, which are a
// typed error naming `<node>.step` or, on an executor that keeps the step only on the device and cannot raise from
// there, all-NaN output: never finite numbers.
// Nothing here asks `supports`: every executor is expected to have all four kernels, and a missing one fails as
// "unsupported".
import { expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import type { AdamMomentAttrs, AdamStepAttrs } from "@attngraph/graph";
import { adamMoment64, adamStep64 } from "../reference/optim64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL, runValues } from "./harness.js";
import { createRng, randomTensor, type Rng } from "./prng.js";
import { expectInvalidStepsRefused, expectStepDependence, expectUnchanged, stepTensor } from "./optim-helpers.js";
import { f32, f64, hostStrided, onExecutor } from "./values.js";
import { sgdChecks } from "./sgd-checks.js";

/**
 * Moments an Adam run could have after step t, so the update stays of order lr (as in training, where |m̂| <= sqrt(v̂)
 * roughly) instead of blowing up where a random v happens to be tiny: m = (1 − β1^t) μ, v = (1 − β2^t)(μ² + σ²).
 */
function plausibleMoments(
  rng: Rng,
  shape: readonly number[],
  t: number,
  beta1: number,
  beta2: number,
): { m: Tensor; v: Tensor } {
  const bc1 = 1 - beta1 ** t;
  const bc2 = 1 - beta2 ** t;
  const mu = randomTensor(rng, shape).toFloat32Array();
  const sigma = randomTensor(rng, shape, (r) => 0.5 * Math.abs(r.normal())).toFloat32Array();
  return {
    m: f32(
      Array.from(mu, (x) => bc1 * x),
      shape,
    ),
    v: f32(
      Array.from(mu, (x, i) => bc2 * (x * x + sigma[i]! * sigma[i]!)),
      shape,
    ),
  };
}

/** Node names for the optimizer of one parameter, as a lowered training graph might spell them. */
const NODE = { m: "optim.w.m", v: "optim.w.v", update: "optim.w.update" };

export function optimChecks(ctx: ContractContext): void {
  // ---------------------------------------------------------------------------------------------------- adam-moment
  const momentCases: { label: string; a: AdamMomentAttrs; param: boolean }[] = [
    { label: "first moment, beta 0.9, param absent", a: attrs.adamMoment({ beta: 0.9 }), param: false },
    {
      label: "second moment, beta 0.999, param absent",
      a: attrs.adamMoment({ beta: 0.999, square: true }),
      param: false,
    },
    { label: "first moment, weightDecay 0.1", a: attrs.adamMoment({ beta: 0.9, weightDecay: 0.1 }), param: true },
    {
      label: "second moment (square), weightDecay 0.5",
      a: attrs.adamMoment({ beta: 0.99, square: true, weightDecay: 0.5 }),
      param: true,
    },
    { label: "param present with weightDecay 0 (no contribution)", a: attrs.adamMoment({ beta: 0.8 }), param: true },
    { label: "beta 0, square (g² alone)", a: attrs.adamMoment({ beta: 0, square: true }), param: false },
  ];
  momentCases.forEach(({ label, a, param }, n) => {
    it(`adam-moment: ${label}; dense, strided host views, transposed values on the executor`, async () => {
      const rng = createRng(1100 + n);
      const shape = [2, 3, 4];
      const state = randomTensor(rng, shape, (r) => (a.square ? Math.abs(r.normal()) : r.normal()));
      const grad = randomTensor(rng, shape);
      const p = param ? randomTensor(rng, shape, (r) => 2 * r.normal()) : undefined;
      const want = { shape, data: adamMoment64(f64(state), f64(grad), p && f64(p), a) };
      const h = ctx.h;
      expectClose(await h.run("adam-moment", a, [state, grad, p], shape), want, OP_TOL, `adam-moment ${label}`);
      expectClose(
        await h.run("adam-moment", a, [hostStrided(state), hostStrided(grad), p && hostStrided(p)], shape),
        want,
        OP_TOL,
        `adam-moment ${label}, strided views`,
      );
      expectClose(
        await h.run("adam-moment", a, [state, hostStrided(grad), p], shape),
        want,
        OP_TOL,
        `adam-moment ${label}, a strided grad only`,
      );
      const values = [
        await onExecutor(h, state),
        await onExecutor(h, grad, [1, 2, 0]),
        p && (await onExecutor(h, p, [0, 2, 1])),
      ];
      expectClose(
        await runValues(h, "adam-moment", a, values, shape),
        want,
        OP_TOL,
        `adam-moment ${label}, transposed values`,
      );
    });
  });

  it("adam-moment: odd sizes past any workgroup or vector width ([4099] and [5, 67]), with weight decay", async () => {
    const rng = createRng(1110);
    for (const shape of [[4099], [5, 67]]) {
      for (const a of [
        attrs.adamMoment({ beta: 0.9, weightDecay: 0.01 }),
        attrs.adamMoment({ beta: 0.999, square: true, weightDecay: 0.01 }),
      ]) {
        const state = randomTensor(rng, shape, (r) => (a.square ? Math.abs(r.normal()) : r.normal()));
        const grad = randomTensor(rng, shape);
        const p = randomTensor(rng, shape);
        const want = { shape, data: adamMoment64(f64(state), f64(grad), f64(p), a) };
        expectClose(
          await ctx.h.run("adam-moment", a, [state, grad, p], shape),
          want,
          OP_TOL,
          `adam-moment [${shape}]${a.square ? " square" : ""}`,
        );
      }
    }
  });

  // ---------------------------------------------------------------------------------------------------- adam-step
  const stepCases: { label: string; a: AdamStepAttrs }[] = [
    { label: "Adam, torch defaults, lr 1e-3", a: attrs.adamStep({ lr: 1e-3 }) },
    {
      label: "Adam, lr 1e-2, weightDecay 0.1 not decoupled (ignored by the step)",
      a: attrs.adamStep({ lr: 1e-2, weightDecay: 0.1 }),
    },
    { label: "AdamW, lr 1e-2, weightDecay 0.01", a: attrs.adamStep({ lr: 1e-2, weightDecay: 0.01, decoupled: true }) },
    {
      label: "AdamW, lr 5e-3, weightDecay 0.5, betas (0.8, 0.99), eps 1e-6",
      a: attrs.adamStep({ lr: 5e-3, beta1: 0.8, beta2: 0.99, eps: 1e-6, weightDecay: 0.5, decoupled: true }),
    },
    { label: "betas (0, 0): no memory, beta^t = 0", a: attrs.adamStep({ lr: 1e-2, beta1: 0, beta2: 0, eps: 1e-3 }) },
    { label: "beta1 0, beta2 0.999", a: attrs.adamStep({ lr: 1e-2, beta1: 0 }) },
  ];
  stepCases.forEach(({ label, a }, n) => {
    it(`adam-step: ${label}; t = 1, 2, 10, 1000, 1e6 as [] and [1]; dense, strided host views, transposed values`, async () => {
      const rng = createRng(1200 + n);
      const shape = [3, 5];
      const h = ctx.h;
      for (const [k, t] of [1, 2, 10, 1000, 1e6].entries()) {
        const stepShape = k % 2 === 0 ? [] : [1];
        const tl = `adam-step ${label}, t = ${t} as [${stepShape}]`;
        const p = randomTensor(rng, shape);
        const { m, v } = plausibleMoments(rng, shape, t, a.beta1, a.beta2);
        const step = stepTensor(t, stepShape);
        const want = { shape, data: adamStep64(f64(p), f64(m), f64(v), t, a) };
        expectClose(await h.run("adam-step", a, [p, m, v, step], shape), want, OP_TOL, tl);
        expectClose(
          await h.run("adam-step", a, [hostStrided(p), hostStrided(m), hostStrided(v), step], shape),
          want,
          OP_TOL,
          `${tl}, strided views`,
        );
        expectClose(
          await h.run("adam-step", a, [p, m, hostStrided(v), step], shape),
          want,
          OP_TOL,
          `${tl}, a strided v only`,
        );
        const values = [await onExecutor(h, p), await h.upload(m), await onExecutor(h, v), await h.upload(step)];
        expectClose(await runValues(h, "adam-step", a, values, shape), want, OP_TOL, `${tl}, transposed param and v`);
        const values2 = [await h.upload(p), await onExecutor(h, m), await h.upload(v), await h.upload(step)];
        expectClose(await runValues(h, "adam-step", a, values2, shape), want, OP_TOL, `${tl}, a transposed m`);
      }
    });
  });

  it("adam-step: the step decides the bias corrections (same data at t = 1, 3 and 50 gives the reference for each)", async () => {
    const rng = createRng(1210);
    const shape = [4, 6];
    const a = attrs.adamStep({ lr: 1e-2, weightDecay: 0.1, decoupled: true });
    const p = randomTensor(rng, shape);
    const { m, v } = plausibleMoments(rng, shape, 3, a.beta1, a.beta2);
    const c = { kind: "adam-step", attrs: a, shape, steps: [1, 3, 50], apart: 1e-4 };
    await expectStepDependence(
      ctx.h,
      c,
      (step) => [p, m, v, step],
      (t) => adamStep64(f64(p), f64(m), f64(v), t, a),
    );
  });

  it("adam-step: an element whose moments are both 0 (no gradient reached it) keeps its parameter, times the AdamW decay; never NaN", async () => {
    const rng = createRng(1220);
    const shape = [2, 8];
    const p = randomTensor(rng, shape);
    const { m: m0, v: v0 } = plausibleMoments(rng, shape, 4, 0.9, 0.999);
    const zero = (i: number): boolean => i % 8 < 3; // the first 3 of each row
    const m = f32(
      Array.from(m0.toFloat32Array(), (x, i) => (zero(i) ? 0 : x)),
      shape,
    );
    const v = f32(
      Array.from(v0.toFloat32Array(), (x, i) => (zero(i) ? 0 : x)),
      shape,
    );
    for (const a of [attrs.adamStep({ lr: 1e-2 }), attrs.adamStep({ lr: 1e-2, weightDecay: 0.2, decoupled: true })]) {
      const label = `adam-step with zero moments${a.decoupled ? ", AdamW" : ""}`;
      const out = await ctx.h.run("adam-step", a, [p, m, v, stepTensor(4, [])], shape);
      expectClose(out, { shape, data: adamStep64(f64(p), f64(m), f64(v), 4, a) }, OP_TOL, label);
      const got = out.toFloat32Array();
      const decay = a.decoupled ? 1 - a.lr * a.weightDecay : 1;
      for (let i = 0; i < got.length; i++) {
        if (zero(i))
          expect(
            Math.abs(got[i]! - p.toFloat32Array()[i]! * decay) <= 1e-6 * (1 + Math.abs(got[i]!)),
            `${label}: element ${i} is ${got[i]}`,
          ).toBe(true);
      }
    }
  });

  it("adam-step: eps 0 with every v > 0, and eps 0.1 larger than sqrt(v̂)", async () => {
    const rng = createRng(1230);
    const shape = [3, 7];
    const p = randomTensor(rng, shape);
    const { m, v } = plausibleMoments(rng, shape, 7, 0.9, 0.999);
    for (const eps of [0, 0.1]) {
      const a = attrs.adamStep({ lr: 1e-2, eps });
      expectClose(
        await ctx.h.run("adam-step", a, [p, m, v, stepTensor(7, [1])], shape),
        { shape, data: adamStep64(f64(p), f64(m), f64(v), 7, a) },
        OP_TOL,
        `adam-step eps ${eps}`,
      );
    }
  });

  it("adam-step: odd sizes past any workgroup or vector width ([4099] and [5, 67])", async () => {
    const rng = createRng(1240);
    const a = attrs.adamStep({ lr: 1e-2, weightDecay: 0.01, decoupled: true });
    for (const shape of [[4099], [5, 67]]) {
      const p = randomTensor(rng, shape);
      const { m, v } = plausibleMoments(rng, shape, 5, a.beta1, a.beta2);
      expectClose(
        await ctx.h.run("adam-step", a, [p, m, v, stepTensor(5, [])], shape),
        { shape, data: adamStep64(f64(p), f64(m), f64(v), 5, a) },
        OP_TOL,
        `adam-step [${shape}]`,
      );
    }
  });

  // ---------------------------------------------------------------------------------------------------- a training loop
  const loopCases: { label: string; a: AdamStepAttrs }[] = [
    { label: "Adam", a: attrs.adamStep({ lr: 1e-2 }) },
    {
      label: "Adam with L2 weightDecay 0.05 (in the moments, param fed to adam-moment)",
      a: attrs.adamStep({ lr: 1e-2, weightDecay: 0.05 }),
    },
    {
      label: "AdamW, weightDecay 0.1",
      a: attrs.adamStep({ lr: 2e-2, beta1: 0.85, beta2: 0.98, weightDecay: 0.1, decoupled: true }),
    },
  ];
  loopCases.forEach(({ label, a }, n) => {
    it(`adam-moment → adam-step: five chained steps of ${label}, each step's outputs fed to the next; steps read from views; nothing updated in place`, async () => {
      const h = ctx.h;
      const rng = createRng(1300 + n);
      const shape = [3, 5];
      const T = 5;
      const l2 = a.decoupled ? 0 : a.weightDecay;
      const mAttrs = attrs.adamMoment({ beta: a.beta1, weightDecay: l2 });
      const vAttrs = attrs.adamMoment({ beta: a.beta2, square: true, weightDecay: l2 });
      const p0 = randomTensor(rng, shape);
      // The steps 1..T uploaded once; odd steps read a slice of it ([1] at an offset), even ones a reshape of that to [].
      const steps = await h.upload(
        Tensor.from(
          Array.from({ length: T }, (_, i) => i + 1),
          [T],
        ),
      );
      let p = await h.upload(p0);
      let m = await h.upload(Tensor.from(new Float32Array(p0.size), shape));
      let v = await h.upload(Tensor.from(new Float32Array(p0.size), shape));
      let rp: Float64Array = f64(p0);
      let rm: Float64Array = new Float64Array(p0.size);
      let rv: Float64Array = new Float64Array(p0.size);
      for (let t = 1; t <= T; t++) {
        const tl = `${label}, step ${t}`;
        const g = randomTensor(rng, shape);
        // Even steps get the gradient as a transposed value made on the executor, odd ones dense.
        const gv = t % 2 === 0 ? await onExecutor(h, g) : await h.upload(g);
        const sliced = await h.dispatch("slice", attrs.slice(0, t - 1, 1), [steps], [1], `optim.step.${t}`);
        const step =
          t % 2 === 0 ? await h.dispatch("reshape", attrs.reshape([]), [sliced], [], `optim.step.${t}.scalar`) : sliced;
        const param = l2 > 0 ? p : undefined;
        const [pBefore, mBefore] = [await h.download(p), await h.download(m)];
        const m2 = await h.dispatch("adam-moment", mAttrs, [m, gv, param], shape, NODE.m);
        const v2 = await h.dispatch("adam-moment", vAttrs, [v, gv, param], shape, NODE.v);
        const p2 = await h.dispatch("adam-step", a, [p, m2, v2, step], shape, NODE.update);
        rm = adamMoment64(rm, f64(g), l2 > 0 ? rp : undefined, mAttrs);
        rv = adamMoment64(rv, f64(g), l2 > 0 ? rp : undefined, vAttrs);
        rp = adamStep64(rp, rm, rv, t, a);
        expectClose(await h.download(m2), { shape, data: rm }, OP_TOL, `${tl}: m`);
        expectClose(await h.download(v2), { shape, data: rv }, OP_TOL, `${tl}: v`);
        expectClose(await h.download(p2), { shape, data: rp }, OP_TOL, `${tl}: param`);
        await expectUnchanged(h, p, pBefore, `${tl}: the previous param`);
        await expectUnchanged(h, m, mBefore, `${tl}: the previous m`);
        [p, m, v] = [p2, m2, v2];
      }
      const moved = f64(p0).reduce((acc, x, i) => Math.max(acc, Math.abs(x - rp[i]!)), 0);
      expect(moved, `${label}: the loop moved the parameters`).toBeGreaterThan(a.lr);
    });
  });

  // ---------------------------------------------------------------------------------------------------- invalid steps
  it("adam-step: a step that is not an integer >= 1 (0, 1.5, -2, NaN) is a typed error naming <node>.step, or all-NaN output where the step lives only on the device; never finite numbers; the executor still works after it", async () => {
    const shape = [2, 3];
    const a = attrs.adamStep({ lr: 1e-2, weightDecay: 0.01, decoupled: true });
    const rng = createRng(1400);
    const p = randomTensor(rng, shape);
    const { m, v } = plausibleMoments(rng, shape, 2, a.beta1, a.beta2);
    const expected = adamStep64(f64(p), f64(m), f64(v), 2, a);
    const c = { kind: "adam-step", attrs: a, node: NODE.update, shape, expected };
    await expectInvalidStepsRefused(ctx.h, c, [p, m, v]);
  });

  sgdChecks(ctx);
}
