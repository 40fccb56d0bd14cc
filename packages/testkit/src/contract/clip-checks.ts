// Global gradient-norm clipping (sum-squares, clip-by-norm), gradient accumulation (grad-accumulate) and adam-step's
// per-step learning-rate factor (lrScale) against float64 references (reference/clip64.ts, torch.nn.utils.
// clip_grad_norm_; reference/optim64.ts): a chain of sum-squares over gradients of several shapes, dense, strided host
// views and transposed values on the executor, a size past any workgroup; clip-by-norm below and above maxNorm;
// grad-accumulate restarting at micro step 1 (a NaN sum from before is not read) and adding after; and lrScale as []
// and [1], 0 and a warmup factor, for adam-step and sgd-step. Bad values from the host are "input" errors naming `<node>.lrScale` / `<node>.step`.
import { expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { clipGradNorm64 } from "../reference/clip64.js";
import { adamStep64, sgdStep64 } from "../reference/optim64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, runValues, stridedOn, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

/** float32 sums of many squares: a little looser than one elementwise op (webgpu adds them in float32). */
const SUM_TOL = { abs: 1e-5, rel: 2e-5 };
const TOL = { abs: 1e-6, rel: 1e-5 };

/** `run` throws an AttnGraphError of `code` whose subject is `subject` (the node and the field at fault). */
async function expectErrorAt(run: () => unknown, code: string, subject: string, label?: string): Promise<void> {
  const e = (await thrown(run)) as AttnGraphError;
  expect(AttnGraphError.isInstance(e) && [e.code, e.subject], label).toEqual([code, subject]);
}

export function clipChecks(ctx: ContractContext): void {
  it("sum-squares: a chain over gradients [3, 5], [7], [2, 3, 4] and [4099] adds every square; dense, strided, transposed", async () => {
    const rng = createRng(1500);
    const h = ctx.h;
    const grads = [[3, 5], [7], [2, 3, 4], [4099]].map((s) => randomTensor(rng, s));
    const want = clipGradNorm64(grads.map(f64), 1).norm ** 2;
    let acc: unknown;
    for (const [i, g] of grads.entries()) {
      const x =
        i === 0 ? await stridedOn(h, g, [1, 0]) : i === 2 ? await stridedOn(h, g, [2, 0, 1]) : await h.upload(g);
      acc = await h.dispatch("sum-squares", {}, [x, acc], [1]);
    }
    expectClose(await h.download(acc), { shape: [1], data: [want] }, SUM_TOL, "sum-squares chain");
    // One tensor alone, from a strided host view, with an acc of shape [].
    const g = grads[2]!;
    const viewed = g.permute([2, 1, 0]).contiguous().permute([2, 1, 0]);
    const one = await h.run("sum-squares", {}, [viewed, Tensor.from([0.5], [])], [1]);
    expectClose(
      one,
      { shape: [1], data: [0.5 + clipGradNorm64([f64(g)], 1).norm ** 2] },
      SUM_TOL,
      "sum-squares of a strided view plus 0.5",
    );
  });

  it("clip-by-norm: below maxNorm the gradient is unchanged; above, scaled to maxNorm / (norm + 1e-6)", async () => {
    const rng = createRng(1510);
    const h = ctx.h;
    const grads = [randomTensor(rng, [4, 6]), randomTensor(rng, [9])];
    const { norm } = clipGradNorm64(grads.map(f64), 1);
    for (const maxNorm of [norm * 2, norm / 3, 0.25]) {
      const want = clipGradNorm64(grads.map(f64), maxNorm);
      const total = Tensor.from([norm * norm], [1]);
      for (const [i, g] of grads.entries()) {
        const a = { maxNorm, eps: 1e-6 };
        expectClose(
          await h.run("clip-by-norm", a, [g, total], g.shape),
          { shape: g.shape, data: want.clipped[i]! },
          TOL,
          `clip-by-norm maxNorm ${maxNorm}`,
        );
        if (g.rank === 2) {
          const t = await runValues(
            h,
            "clip-by-norm",
            a,
            [await stridedOn(h, g, [1, 0]), await h.upload(Tensor.from([norm * norm], []))],
            g.shape,
          );
          expectClose(
            t,
            { shape: g.shape, data: want.clipped[i]! },
            TOL,
            `clip-by-norm maxNorm ${maxNorm}, transposed`,
          );
        }
      }
    }
  });

  it("sum-squares → clip-by-norm on the executor: the total never leaves it", async () => {
    const rng = createRng(1520);
    const h = ctx.h;
    const grads = [randomTensor(rng, [5, 3]), randomTensor(rng, [300])];
    const up = await Promise.all(grads.map((g) => h.upload(g)));
    const s1 = await h.dispatch("sum-squares", {}, [up[0]], [1]);
    const total = await h.dispatch("sum-squares", {}, [up[1], s1], [1]);
    const want = clipGradNorm64(grads.map(f64), 1);
    for (const [i, g] of grads.entries()) {
      const got = await h.download(
        await h.dispatch("clip-by-norm", { maxNorm: 1, eps: 1e-6 }, [up[i], total], g.shape),
      );
      expectClose(got, { shape: g.shape, data: want.clipped[i]! }, TOL, `clipped gradient ${i}`);
    }
  });

  it("clip-by-norm: maxNorm 0 or missing is an attr error naming <node>.maxNorm; a total of shape [2], a shape error", async () => {
    const h = ctx.h;
    const g = Tensor.from([1, 2], [2]);
    for (const a of [{ maxNorm: 0 }, {}]) {
      const run = () => h.run("clip-by-norm", a, [g, Tensor.from([5], [1])], [2]);
      await expectErrorAt(run, "attr", "contract.clip-by-norm.maxNorm");
    }
    const run = () => h.run("clip-by-norm", { maxNorm: 1 }, [g, Tensor.from([5, 1], [2])], [2]);
    await expectErrorAt(run, "shape", "contract.clip-by-norm.sumSquares");
  });

  it("grad-accumulate: k = 1 restarts (a NaN acc is not read), k > 1 adds; dense, strided, transposed; a bad k is an input error", async () => {
    const rng = createRng(1540);
    const h = ctx.h;
    const shape = [3, 7];
    const scale = 0.25;
    const gs = [0, 1, 2].map(() => randomTensor(rng, shape));
    const nan = Tensor.from(new Float32Array(21).fill(NaN), shape);
    let acc = await h.upload(nan);
    const want = new Float64Array(21);
    for (const [i, g] of gs.entries()) {
      const k = Tensor.from([i + 1], i % 2 ? [] : [1]);
      const gv = i === 1 ? await stridedOn(h, g, [1, 0]) : await h.upload(g);
      acc = await h.dispatch("grad-accumulate", { scale }, [acc, gv, await h.upload(k)], shape);
      f64(g).forEach((x, j) => (want[j] = (i === 0 ? 0 : want[j]!) + scale * x));
      expectClose(await h.download(acc), { shape, data: want }, TOL, `grad-accumulate micro step ${i + 1}`);
    }
    const viewed = gs[0]!.permute([1, 0]).contiguous().permute([1, 0]);
    const once = await h.run("grad-accumulate", { scale: 2 }, [viewed, gs[1]!, Tensor.from([2], [1])], shape);
    expectClose(
      once,
      { shape, data: Float64Array.from(f64(gs[0]!), (x, j) => x + 2 * f64(gs[1]!)[j]!) },
      TOL,
      "grad-accumulate of a strided acc",
    );
    for (const bad of [0, 1.5]) {
      const run = () => h.run("grad-accumulate", { scale }, [gs[0]!, gs[1]!, Tensor.from([bad], [1])], shape);
      await expectErrorAt(run, "input", "contract.grad-accumulate.step", `k ${bad}`);
    }
  });

  it("adam-step with lrScale: lr · lrScale in the step and the decoupled decay; [] and [1]; 0 leaves the param", async () => {
    const rng = createRng(1530);
    const shape = [3, 4];
    const h = ctx.h;
    const a = attrs.adamStep({ lr: 6e-4, beta1: 0.9, beta2: 0.95, weightDecay: 0.1, decoupled: true });
    const p = randomTensor(rng, shape);
    const m = randomTensor(rng, shape, (r) => 0.1 * r.normal());
    const v = randomTensor(rng, shape, (r) => 0.01 + 0.01 * Math.abs(r.normal()));
    for (const [k, s] of [0.25, 1, 0.001, 0].entries()) {
      const scale = Tensor.from([s], k % 2 ? [1] : []);
      const want = adamStep64(f64(p), f64(m), f64(v), 3, { ...a, lr: a.lr * Math.fround(s) });
      expectClose(
        await h.run("adam-step", a, [p, m, v, Tensor.from([3], [1]), scale], shape),
        { shape, data: want },
        TOL,
        `adam-step lrScale ${s}`,
      );
    }
    for (const bad of [-1, NaN]) {
      const run = () => h.run("adam-step", a, [p, m, v, Tensor.from([3], [1]), Tensor.from([bad], [1])], shape);
      await expectErrorAt(run, "input", "contract.adam-step.lrScale", `lrScale ${bad}`);
    }
  });

  it("sgd-step with lrScale: lr · lrScale, plain and with momentum; 0 leaves the param; a bad factor names <node>.lrScale", async () => {
    const rng = createRng(1550);
    const shape = [4, 3];
    const h = ctx.h;
    const p = randomTensor(rng, shape);
    const g = randomTensor(rng, shape);
    const buf = randomTensor(rng, shape);
    for (const a of [
      attrs.sgdStep({ lr: 0.1, weightDecay: 0.01 }),
      attrs.sgdStep({ lr: 0.05, momentum: 0.9, nesterov: true }),
    ]) {
      const withBuf = a.momentum > 0 ? buf : undefined;
      for (const [k, s] of [0.5, 0].entries()) {
        // The reference takes lr > 0 only: a factor of 0 leaves the parameter as it is.
        const want = s === 0 ? f64(p) : sgdStep64(f64(p), f64(g), withBuf && f64(withBuf), { ...a, lr: a.lr * s });
        const got = await h.run("sgd-step", a, [p, g, withBuf, Tensor.from([s], k ? [] : [1])], shape);
        expectClose(got, { shape, data: want }, TOL, `sgd-step momentum ${a.momentum}, lrScale ${s}`);
      }
    }
    const run = () => h.run("sgd-step", attrs.sgdStep({ lr: 0.1 }), [p, g, undefined, Tensor.from([-0.5], [1])], shape);
    await expectErrorAt(run, "input", "contract.sgd-step.lrScale");
  });
}
