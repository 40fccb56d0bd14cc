// The five-step training loops that the cpu and wasm optimizer kernel tests each ran (adam-moment → adam-step,
// sgd-momentum → sgd-step): after every step the moments (or the momentum buffer) and the parameter match a float64
// loop of torch's update, and the parameter has moved by more than lr at the end. Each executor hands in how its values
// live (a ValueExecutor): host tensors as they are on the cpu; uploaded with their own layout, and released, on wasm.
import { expect } from "vitest";
import { compare, Tensor, type Tolerance } from "@attngraph/tensor";
import type { AdamStepAttrs } from "@attngraph/graph";
import type { SeededRandom } from "./chunked-calls.js";
import type { ValueExecutor } from "./value-executor.js";
import { torchAdamLoop, torchSgdLoop, type SgdLoop } from "./optim-kernel-cases.js";

/** An executor's values as a training loop keeps them between steps (upload keeps a strided gradient strided). */
export interface LoopExecutor<V> extends ValueExecutor<V> {
  /** The executor's own seeded generator, so its loop keeps the values its tests always used. */
  readonly random: SeededRandom;
  /** The parameter's shape [rows, cols]. */
  readonly shape: readonly [number, number];
}

const near = (got: Tensor, want: ArrayLike<number>, tol: Tolerance, label: string): void => {
  const r = compare(got, want, tol);
  expect(r.ok, `${label}: ${JSON.stringify(r.worst)}`).toBe(true);
};

/**
 * Step t's inputs: the gradient on the host (strided on even steps: a transposed [cols, rows]), the same as a value of
 * the executor, and the step input t ([1] on odd steps, [] on even ones).
 */
function loopInputs<V>(ex: LoopExecutor<V>, t: number): { gHost: Tensor; g: V; s: V } {
  const [rows, cols] = ex.shape;
  const gHost = t % 2 === 0 ? ex.random([cols, rows], 200 + t, 2).permute([1, 0]) : ex.random(ex.shape, 200 + t, 2);
  return { gHost, g: ex.upload(gHost), s: ex.upload(Tensor.from([t], t % 2 ? [1] : [])) };
}

/** The largest |p − p0|: how far the parameter moved from its start. */
function moved<V>(ex: LoopExecutor<V>, p: V, p0: Tensor): number {
  const start = p0.toFloat32Array();
  return ex
    .download(p)
    .toFloat32Array()
    .reduce((w, x, k) => Math.max(w, Math.abs(x - start[k]!)), 0);
}

/** Five steps of adam-moment (m and v) → adam-step on `ex` against torch.optim.Adam (AdamW when decoupled). */
export function expectAdamLoop<V>(ex: LoopExecutor<V>, a: AdamStepAttrs): void {
  const shape = ex.shape;
  const l2 = a.decoupled ? 0 : a.weightDecay;
  const p0 = ex.random(shape, 100);
  const zeros = () => ex.upload(Tensor.from(new Float32Array(shape[0] * shape[1]), shape));
  let [p, m, v] = [ex.upload(p0), zeros(), zeros()];
  const rp = Float64Array.from(p0.toFloat32Array());
  const torch = torchAdamLoop(rp, a); // updates rp in place
  for (let t = 1; t <= 5; t++) {
    const { gHost, g, s } = loopInputs(ex, t);
    const param = l2 > 0 ? p : undefined;
    const moment = (node: string, beta: number, square: boolean, state: V) =>
      ex.dispatch("adam-moment", node, { beta, square, weightDecay: l2 }, [state, g, param], shape);
    const m2 = moment("optim.w.m", a.beta1, false, m);
    const v2 = moment("optim.w.v", a.beta2, true, v);
    const p2 = ex.dispatch("adam-step", "optim.w.update", { ...a }, [p, m2, v2, s], shape);
    torch.update([Float64Array.from(gHost.toFloat32Array())]);
    near(ex.download(m2), torch.expAvg[0]!, { abs: 1e-7, rel: 1e-6 }, `m at step ${t}`);
    near(ex.download(v2), torch.expAvgSq[0]!, { abs: 1e-7, rel: 1e-6 }, `v at step ${t}`);
    near(ex.download(p2), rp, { abs: 1e-6, rel: 1e-6 }, `param at step ${t}`);
    for (const x of [p, m, v, g, s]) ex.release(x);
    [p, m, v] = [p2, m2, v2];
  }
  expect(moved(ex, p, p0)).toBeGreaterThan(a.lr);
  for (const x of [p, m, v]) ex.release(x);
}

/** Five steps of sgd-momentum (with momentum) → sgd-step on `ex` against torch.optim.SGD. */
export function expectSgdLoop<V>(ex: LoopExecutor<V>, a: SgdLoop): void {
  const shape = ex.shape;
  const p0 = ex.random(shape, 100);
  let p = ex.upload(p0);
  // The buffer before step 1 is never read (PyTorch clones d into it): NaN here proves it.
  let b = a.momentum > 0 ? ex.upload(Tensor.from(new Float32Array(shape[0] * shape[1]).fill(NaN), shape)) : undefined;
  const rp = Float64Array.from(p0.toFloat32Array());
  const torch = torchSgdLoop(rp, a); // updates rp in place
  for (let t = 1; t <= 5; t++) {
    const { gHost, g, s } = loopInputs(ex, t);
    const param = a.weightDecay > 0 ? p : undefined;
    const mAttrs = { momentum: a.momentum, dampening: a.dampening, weightDecay: a.weightDecay };
    const b2 = b && ex.dispatch("sgd-momentum", "optim.w.buf", mAttrs, [b, g, param, s], shape);
    const { lr, momentum, nesterov, weightDecay } = a;
    const p2 = ex.dispatch("sgd-step", "optim.w.update", { lr, momentum, nesterov, weightDecay }, [p, g, b2], shape);
    torch.update([Float64Array.from(gHost.toFloat32Array())]);
    if (b2) near(ex.download(b2), torch.buffers[0]!, { abs: 1e-6, rel: 1e-6 }, `buf at step ${t}`);
    near(ex.download(p2), rp, { abs: 1e-6, rel: 1e-6 }, `param at step ${t}`);
    for (const x of [p, b, g, s]) if (x) ex.release(x);
    [p, b] = [p2, b2];
  }
  expect(moved(ex, p, p0)).toBeGreaterThan(a.lr);
  for (const x of [p, b]) if (x) ex.release(x);
}
