// sgd-momentum and sgd-step against their float64 references (see optim-checks.ts, which runs these after Adam's).
import { expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import type { SgdMomentumAttrs, SgdStepAttrs } from "@attngraph/graph";
import { sgdMomentum64, sgdStep64 } from "../reference/optim64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL, runValues } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { expectInvalidStepsRefused, expectStepDependence, expectUnchanged, stepTensor } from "./optim-helpers.js";
import { f64, hostStrided, onExecutor } from "./values.js";

/** Node names for SGD on one parameter, as a lowered training graph might spell them. */
const SGD_NODE = { buf: "optim.w.buf", update: "optim.w.update" };

export function sgdChecks(ctx: ContractContext): void {
  // ---------------------------------------------------------------------------------------------------- sgd-momentum
  const bufCases: { label: string; a: SgdMomentumAttrs; param: boolean }[] = [
    { label: "momentum 0.9, param absent (torch's defaults)", a: attrs.sgdMomentum({ momentum: 0.9 }), param: false },
    {
      label: "momentum 0.9, dampening 0.1, weightDecay 0.01",
      a: attrs.sgdMomentum({ momentum: 0.9, dampening: 0.1, weightDecay: 0.01 }),
      param: true,
    },
    {
      label: "momentum 0.99, dampening 0.5, weightDecay 0.5",
      a: attrs.sgdMomentum({ momentum: 0.99, dampening: 0.5, weightDecay: 0.5 }),
      param: true,
    },
    {
      label: "momentum 0.5, dampening 1 (momentum · buf after step 1)",
      a: attrs.sgdMomentum({ momentum: 0.5, dampening: 1 }),
      param: false,
    },
    {
      label: "momentum 0, dampening 0.3 ((1 − dampening) · d after step 1)",
      a: attrs.sgdMomentum({ momentum: 0, dampening: 0.3 }),
      param: false,
    },
    {
      label: "param present with weightDecay 0 (no contribution)",
      a: attrs.sgdMomentum({ momentum: 0.8 }),
      param: true,
    },
  ];
  bufCases.forEach(({ label, a, param }, n) => {
    it(`sgd-momentum: ${label}; t = 1, 2, 7, 1e6 as [] and [1]; dense, strided host views, transposed values on the executor`, async () => {
      const rng = createRng(1500 + n);
      const shape = [2, 3, 4];
      const h = ctx.h;
      for (const [k, t] of [1, 2, 7, 1e6].entries()) {
        const stepShape = k % 2 === 0 ? [] : [1];
        const tl = `sgd-momentum ${label}, t = ${t} as [${stepShape}]`;
        const buf = randomTensor(rng, shape);
        const grad = randomTensor(rng, shape);
        const p = param ? randomTensor(rng, shape, (r) => 2 * r.normal()) : undefined;
        const step = stepTensor(t, stepShape);
        const want = { shape, data: sgdMomentum64(f64(buf), f64(grad), p && f64(p), t, a) };
        expectClose(await h.run("sgd-momentum", a, [buf, grad, p, step], shape), want, OP_TOL, tl);
        expectClose(
          await h.run("sgd-momentum", a, [hostStrided(buf), hostStrided(grad), p && hostStrided(p), step], shape),
          want,
          OP_TOL,
          `${tl}, strided views`,
        );
        expectClose(
          await h.run("sgd-momentum", a, [buf, hostStrided(grad), p, step], shape),
          want,
          OP_TOL,
          `${tl}, a strided grad only`,
        );
        const values = [
          await onExecutor(h, buf),
          await onExecutor(h, grad, [1, 2, 0]),
          p && (await onExecutor(h, p, [0, 2, 1])),
          await h.upload(step),
        ];
        expectClose(await runValues(h, "sgd-momentum", a, values, shape), want, OP_TOL, `${tl}, transposed values`);
        const values2 = [
          await h.upload(buf),
          await onExecutor(h, grad),
          p && (await h.upload(p)),
          await h.upload(step),
        ];
        expectClose(await runValues(h, "sgd-momentum", a, values2, shape), want, OP_TOL, `${tl}, a transposed grad`);
      }
    });
  });

  it("sgd-momentum: step 1 does not read the buffer (PyTorch's clone): a NaN, infinite or 1e30 buffer still gives d", async () => {
    const rng = createRng(1510);
    const shape = [3, 5];
    const a = attrs.sgdMomentum({ momentum: 0.9, dampening: 0.5, weightDecay: 0.1 });
    const grad = randomTensor(rng, shape);
    const p = randomTensor(rng, shape);
    const want = { shape, data: sgdMomentum64(new Float64Array(p.size), f64(grad), f64(p), 1, a) };
    const fills: [string, (i: number) => number][] = [
      ["NaN", () => NaN],
      ["±Infinity", (i) => (i % 2 === 0 ? Infinity : -Infinity)],
      ["±1e30", (i) => (i % 3 === 0 ? -1e30 : 1e30)],
    ];
    for (const [k, [what, fill]] of fills.entries()) {
      const buf = Tensor.from(
        Float32Array.from({ length: p.size }, (_, i) => fill(i)),
        shape,
      );
      const step = stepTensor(1, k % 2 === 0 ? [1] : []);
      expectClose(
        await ctx.h.run("sgd-momentum", a, [buf, grad, p, step], shape),
        want,
        OP_TOL,
        `sgd-momentum at step 1 with a ${what} buffer`,
      );
      const values = [
        await onExecutor(ctx.h, buf),
        await ctx.h.upload(grad),
        await ctx.h.upload(p),
        await ctx.h.upload(step),
      ];
      expectClose(
        await runValues(ctx.h, "sgd-momentum", a, values, shape),
        want,
        OP_TOL,
        `sgd-momentum at step 1 with a ${what} buffer, transposed`,
      );
    }
  });

  it("sgd-momentum: the step decides (same data at t = 1, 2 and 50 gives the reference for each; 1 differs from 2)", async () => {
    const rng = createRng(1520);
    const shape = [4, 6];
    const a = attrs.sgdMomentum({ momentum: 0.9, dampening: 0.2, weightDecay: 0.05 });
    const buf = randomTensor(rng, shape);
    const grad = randomTensor(rng, shape);
    const p = randomTensor(rng, shape);
    const c = { kind: "sgd-momentum", attrs: a, shape, steps: [1, 2, 50], apart: 1e-3 };
    const want = (t: number) => sgdMomentum64(f64(buf), f64(grad), f64(p), t, a);
    await expectStepDependence(ctx.h, c, (step) => [buf, grad, p, step], want);
  });

  it("sgd-momentum: odd sizes past any workgroup or vector width ([4099] and [5, 67]), with weight decay, at t = 1 and t = 3", async () => {
    const rng = createRng(1530);
    const a = attrs.sgdMomentum({ momentum: 0.9, dampening: 0.1, weightDecay: 0.01 });
    for (const shape of [[4099], [5, 67]]) {
      for (const t of [1, 3]) {
        const buf = randomTensor(rng, shape);
        const grad = randomTensor(rng, shape);
        const p = randomTensor(rng, shape);
        const want = { shape, data: sgdMomentum64(f64(buf), f64(grad), f64(p), t, a) };
        expectClose(
          await ctx.h.run("sgd-momentum", a, [buf, grad, p, stepTensor(t, [])], shape),
          want,
          OP_TOL,
          `sgd-momentum [${shape}] at t = ${t}`,
        );
      }
    }
  });

  // ---------------------------------------------------------------------------------------------------- sgd-step
  const sgdCases: { label: string; a: SgdStepAttrs; buf: boolean }[] = [
    { label: "plain SGD, lr 0.1 (momentum 0, no buffer)", a: attrs.sgdStep({ lr: 0.1 }), buf: false },
    { label: "plain SGD, lr 0.05, weightDecay 0.1", a: attrs.sgdStep({ lr: 0.05, weightDecay: 0.1 }), buf: false },
    { label: "momentum 0 with a buffer given (not read)", a: attrs.sgdStep({ lr: 0.1, weightDecay: 0.01 }), buf: true },
    { label: "momentum 0.9 (u = buf)", a: attrs.sgdStep({ lr: 0.1, momentum: 0.9 }), buf: true },
    {
      label: "momentum 0.9, weightDecay 0.5 (in the buffer: u = buf)",
      a: attrs.sgdStep({ lr: 0.1, momentum: 0.9, weightDecay: 0.5 }),
      buf: true,
    },
    {
      label: "Nesterov, momentum 0.9, weightDecay 0.01",
      a: attrs.sgdStep({ lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.01 }),
      buf: true,
    },
    {
      label: "Nesterov, momentum 0.5, weightDecay 0.5",
      a: attrs.sgdStep({ lr: 0.2, momentum: 0.5, nesterov: true, weightDecay: 0.5 }),
      buf: true,
    },
  ];
  sgdCases.forEach(({ label, a, buf: hasBuf }, n) => {
    it(`sgd-step: ${label}; dense, strided host views, transposed values on the executor`, async () => {
      const rng = createRng(1600 + n);
      const shape = [3, 5];
      const h = ctx.h;
      for (let round = 0; round < 2; round++) {
        const tl = `sgd-step ${label}, round ${round}`;
        const p = randomTensor(rng, shape, (r) => 2 * r.normal());
        const grad = randomTensor(rng, shape);
        const buf = hasBuf ? randomTensor(rng, shape) : undefined;
        const want = { shape, data: sgdStep64(f64(p), f64(grad), buf && f64(buf), a) };
        expectClose(await h.run("sgd-step", a, [p, grad, buf], shape), want, OP_TOL, tl);
        expectClose(
          await h.run("sgd-step", a, [hostStrided(p), hostStrided(grad), buf && hostStrided(buf)], shape),
          want,
          OP_TOL,
          `${tl}, strided views`,
        );
        expectClose(
          await h.run("sgd-step", a, [p, hostStrided(grad), buf], shape),
          want,
          OP_TOL,
          `${tl}, a strided grad only`,
        );
        const values = [await onExecutor(h, p), await h.upload(grad), buf && (await onExecutor(h, buf, [1, 0]))];
        expectClose(await runValues(h, "sgd-step", a, values, shape), want, OP_TOL, `${tl}, transposed param and buf`);
        const values2 = [await h.upload(p), await onExecutor(h, grad), buf && (await h.upload(buf))];
        expectClose(await runValues(h, "sgd-step", a, values2, shape), want, OP_TOL, `${tl}, a transposed grad`);
      }
    });
  });

  it("sgd-step: momentum 0 never reads a buffer given: a NaN one changes nothing", async () => {
    const rng = createRng(1610);
    const shape = [2, 7];
    const a = attrs.sgdStep({ lr: 0.1, weightDecay: 0.2 });
    const p = randomTensor(rng, shape);
    const grad = randomTensor(rng, shape);
    const nan = Tensor.from(new Float32Array(p.size).fill(NaN), shape);
    expectClose(
      await ctx.h.run("sgd-step", a, [p, grad, nan], shape),
      { shape, data: sgdStep64(f64(p), f64(grad), undefined, a) },
      OP_TOL,
      "sgd-step, momentum 0, a NaN buffer",
    );
  });

  it("sgd-step: odd sizes past any workgroup or vector width ([4099] and [5, 67]), plain and Nesterov", async () => {
    const rng = createRng(1620);
    for (const shape of [[4099], [5, 67]]) {
      for (const a of [
        attrs.sgdStep({ lr: 0.05, weightDecay: 0.01 }),
        attrs.sgdStep({ lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 }),
      ]) {
        const p = randomTensor(rng, shape);
        const grad = randomTensor(rng, shape);
        const buf = a.momentum > 0 ? randomTensor(rng, shape) : undefined;
        const want = { shape, data: sgdStep64(f64(p), f64(grad), buf && f64(buf), a) };
        expectClose(
          await ctx.h.run("sgd-step", a, [p, grad, buf], shape),
          want,
          OP_TOL,
          `sgd-step [${shape}]${a.nesterov ? " Nesterov" : ""}`,
        );
      }
    }
  });

  // ---------------------------------------------------------------------------------------------------- a training loop
  const sgdLoops: { label: string; a: SgdStepAttrs; dampening: number }[] = [
    {
      label: "plain SGD with weightDecay 0.05 (sgd-step alone)",
      a: attrs.sgdStep({ lr: 0.05, weightDecay: 0.05 }),
      dampening: 0,
    },
    {
      label: "momentum 0.9, dampening 0.1, weightDecay 0.01",
      a: attrs.sgdStep({ lr: 0.05, momentum: 0.9, weightDecay: 0.01 }),
      dampening: 0.1,
    },
    {
      label: "Nesterov, momentum 0.8, weightDecay 0.1",
      a: attrs.sgdStep({ lr: 0.05, momentum: 0.8, nesterov: true, weightDecay: 0.1 }),
      dampening: 0,
    },
  ];
  sgdLoops.forEach(({ label, a, dampening }, n) => {
    it(`sgd-momentum → sgd-step: five chained steps of ${label}, each step's outputs fed to the next; steps read from views; nothing updated in place`, async () => {
      const h = ctx.h;
      const rng = createRng(1700 + n);
      const shape = [3, 5];
      const T = 5;
      const bAttrs = attrs.sgdMomentum({ momentum: a.momentum, dampening, weightDecay: a.weightDecay });
      const p0 = randomTensor(rng, shape);
      // The initial buffer is junk (not zeros): step 1 must not read it.
      const b0 = randomTensor(rng, shape, (r) => 3 * r.normal());
      // The steps 1..T uploaded once; odd steps read a slice of it ([1] at an offset), even ones a reshape of that to [].
      const steps = await h.upload(
        Tensor.from(
          Array.from({ length: T }, (_, i) => i + 1),
          [T],
        ),
      );
      let p = await h.upload(p0);
      let b = await h.upload(b0);
      let rp: Float64Array = f64(p0);
      let rb: Float64Array = f64(b0);
      for (let t = 1; t <= T; t++) {
        const tl = `${label}, step ${t}`;
        const g = randomTensor(rng, shape);
        // Even steps get the gradient as a transposed value made on the executor, odd ones dense.
        const gv = t % 2 === 0 ? await onExecutor(h, g) : await h.upload(g);
        const [pBefore, bBefore] = [await h.download(p), await h.download(b)];
        let b2: unknown;
        if (a.momentum > 0) {
          const sliced = await h.dispatch("slice", attrs.slice(0, t - 1, 1), [steps], [1], `optim.step.${t}`);
          const step =
            t % 2 === 0
              ? await h.dispatch("reshape", attrs.reshape([]), [sliced], [], `optim.step.${t}.scalar`)
              : sliced;
          b2 = await h.dispatch(
            "sgd-momentum",
            bAttrs,
            [b, gv, a.weightDecay > 0 ? p : undefined, step],
            shape,
            SGD_NODE.buf,
          );
          rb = sgdMomentum64(rb, f64(g), a.weightDecay > 0 ? rp : undefined, t, bAttrs);
          expectClose(await h.download(b2), { shape, data: rb }, OP_TOL, `${tl}: buf`);
        }
        const p2 = await h.dispatch("sgd-step", a, [p, gv, b2], shape, SGD_NODE.update);
        rp = sgdStep64(rp, f64(g), a.momentum > 0 ? rb : undefined, a);
        expectClose(await h.download(p2), { shape, data: rp }, OP_TOL, `${tl}: param`);
        await expectUnchanged(h, p, pBefore, `${tl}: the previous param`);
        await expectUnchanged(h, b, bBefore, `${tl}: the previous buf`);
        p = p2;
        if (b2 !== undefined) b = b2;
      }
      const moved = f64(p0).reduce((acc, x, i) => Math.max(acc, Math.abs(x - rp[i]!)), 0);
      expect(moved, `${label}: the loop moved the parameters`).toBeGreaterThan(a.lr);
    });
  });

  // ---------------------------------------------------------------------------------------------------- invalid steps
  it("sgd-momentum: a step that is not an integer >= 1 (0, 1.5, -2, NaN) is a typed error naming <node>.step, or all-NaN output where the step lives only on the device; never finite numbers; the executor still works after it", async () => {
    const shape = [2, 3];
    const a = attrs.sgdMomentum({ momentum: 0.9, dampening: 0.1, weightDecay: 0.01 });
    const rng = createRng(1800);
    const buf = randomTensor(rng, shape);
    const grad = randomTensor(rng, shape);
    const p = randomTensor(rng, shape);
    const expected = sgdMomentum64(f64(buf), f64(grad), f64(p), 2, a);
    const c = { kind: "sgd-momentum", attrs: a, node: SGD_NODE.buf, shape, expected };
    await expectInvalidStepsRefused(ctx.h, c, [buf, grad, p]);
  });
}
