// adam-step on wasm against torch.optim.Adam's (AdamW's) update in float64 (testkit's adamStepCase64): Adam and AdamW, t from
// 1 to 1e6 as [] and [1], rows of every length mod 4, strided param, m and v (each and all), the step read through a
// view, invalid steps (a typed error naming <node>.step), chunks, and a five-step training loop of adam-moment →
// adam-step against a float64 loop of torch's step.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, type Shape } from "@attngraph/tensor";
import { ADAM_LOOPS, ADAM_STEP_CASES, adamStepCase64, torchAdamLoop, type AdamStepCase } from "@attngraph/testkit";
import { f64, onWasm, onWasmViews, random, wasmExecutor, worst } from "../test-util.js";
import { dispatchInChunks, failingCall } from "../test-dispatch.js";
import { BAD_STEPS, LOOP_SHAPE, eachStrided, loopDispatch, loopStep, moved } from "./test-optim.js";

const ex = await wasmExecutor();

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);
const run = (p: Tensor, m: Tensor, v: Tensor, t: Tensor, a: AdamStepCase, views = false, node = "optim.w.update") =>
  (views ? onWasmViews : onWasm)(ex, "adam-step", { ...a }, [p, m, v, t], p.shape, node);
/** Float64 in the module too (β^t by the module's own pow): equal to the reference rounded once, within an ulp or so. */
const expectNear = (got: Tensor, want: ArrayLike<number>, abs = 1e-7, rel = 1e-6) =>
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), abs, rel)).toBeLessThanOrEqual(1);
/** Dispatches on uploads of `inputs` [2, 3] (released after) and returns what it threw. */
const failure = failingCall(ex, "adam-step", "optim.w.update", [2, 3]);
const positive = (t: Tensor, at: number) =>
  new Tensor(
    t.toFloat32Array().map((x) => at + Math.abs(x)),
    t.shape,
  );

describe("adam-step on wasm", () => {
  it("Adam and AdamW, t = 1 … 1e6 as [] and [1], rows of every length mod 4", () => {
    for (const n of [1, 3, 4, 5, 8, 37]) {
      const p = random([3, n], n);
      const m = random([3, n], n + 10, 0.1);
      const v = positive(random([3, n], n + 20, 0.01), 1e-3);
      for (const a of ADAM_STEP_CASES) {
        for (const [k, t] of [1, 2, 10, 1000, 1e6].entries())
          expectNear(run(p, m, v, step(t, k % 2 ? [1] : []), a), adamStepCase64(f64(p), f64(m), f64(v), t, a));
      }
    }
  });

  it("decoupled false ignores weightDecay; moments of 0 keep the param (times the AdamW decay), never NaN", () => {
    const p = random([2, 9], 1);
    const zero = new Tensor(new Float32Array(18), [2, 9]);
    expect(Array.from(run(p, zero, zero, step(3), { lr: 0.1, weightDecay: 0.5 }).toFloat32Array())).toEqual(
      Array.from(p.toFloat32Array()),
    );
    expectNear(
      run(p, zero, zero, step(3), { lr: 0.1, weightDecay: 0.5, decoupled: true }),
      Array.from(p.toFloat32Array(), (x) => x * 0.95),
    );
  });

  it("strided param, m and v (transposed), each and all; the dense copy of a strided v released", () => {
    const before = ex.inUseBytes;
    const p = random([4, 5, 6], 1);
    const m = random([4, 5, 6], 2, 0.1);
    const v = positive(random([4, 5, 6], 3, 0.01), 1e-3);
    const pT = random([6, 4, 5], 4).permute([1, 2, 0]);
    const mT = random([5, 6, 4], 5, 0.1).permute([2, 0, 1]);
    const vT = positive(random([4, 6, 5], 6, 0.01), 1e-3).permute([0, 2, 1]);
    for (const a of ADAM_STEP_CASES) {
      for (const [x, y, z] of eachStrided([p, m, v], [pT, mT, vT])) {
        expectNear(run(x, y, z, step(7, [1]), a, true), adamStepCase64(f64(x), f64(y), f64(z), 7, a));
      }
    }
    expect(ex.inUseBytes).toBe(before);
  });

  it("reads the step through a view: a slice of a steps tensor at an offset, and a reshape of it to []", () => {
    const p = random([3, 5], 1);
    const m = random([3, 5], 2, 0.1);
    const v = positive(random([3, 5], 3, 0.01), 1e-3);
    const steps = Tensor.from([1, 2, 3, 4], [4]);
    for (const t of [new Tensor(steps.data, [1], [1], 2), new Tensor(steps.data, [], [], 2)]) {
      expectNear(run(p, m, v, t, { lr: 1e-2 }, true), adamStepCase64(f64(p), f64(m), f64(v), 3, { lr: 1e-2 }));
    }
  });

  it("a step that is not an integer >= 1 (0, 1.5, NaN, -2, ∞) is an input error naming <node>.step; the executor still works", () => {
    const p = random([2, 3], 1);
    const m = random([2, 3], 2, 0.1);
    const v = positive(random([2, 3], 3, 0.01), 1e-3);
    const before = ex.inUseBytes;
    for (const [t, bad] of BAD_STEPS) {
      const e = failure({ lr: 1e-2 }, [p, m, v, bad]);
      expect(AttnGraphError.isInstance(e), `step ${t}`).toBe(true);
      expect([e.code, e.subject], `step ${t}`).toEqual(["input", "optim.w.update.step"]);
      expect(e.message).toContain("optim.w.update.step");
    }
    expect(ex.inUseBytes, "nothing left allocated").toBe(before);
    expectNear(run(p, m, v, step(2), { lr: 1e-2 }), adamStepCase64(f64(p), f64(m), f64(v), 2, { lr: 1e-2 }));
  });

  it("errors name the node and field: the step's shape, m and v shapes, attributes", () => {
    const [p, m, v] = [random([2, 3], 1), random([2, 3], 2), positive(random([2, 3], 3), 0)];
    const before = ex.inUseBytes;
    let e = failure({ lr: 1 }, [p, m, v, Tensor.from([1, 2], [2])]);
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.step"]);
    e = failure({ lr: 1 }, [p, random([3, 2], 4), v, step(1)]);
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.m"]);
    e = failure({ lr: 1 }, [p, m, random([6], 4), step(1)]);
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.v"]);
    for (const [attrs, field] of [
      [{ lr: 0 }, "lr"],
      [{}, "lr"],
      [{ lr: 1, beta1: 1 }, "beta1"],
      [{ lr: 1, beta2: -0.5 }, "beta2"],
      [{ lr: 1, eps: -1 }, "eps"],
      [{ lr: 1, weightDecay: NaN }, "weightDecay"],
      [{ lr: 1, decoupled: 1 }, "decoupled"],
    ] as const) {
      e = failure(attrs, [p, m, v, step(1)]);
      expect([e.code, e.subject]).toEqual(["attr", `optim.w.update.${field}`]);
    }
    expect(ex.inUseBytes).toBe(before);
  });

  it("in chunks of a tiny chunkWork (dense, and strided with a v copied dense): bit for bit one call, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const a = { lr: 1e-2, weightDecay: 0.1, decoupled: true };
    const v = positive(random([6, 50], 9, 0.01), 1e-3);
    for (const [p, m, vv] of [
      [random([6, 50], 7), random([6, 50], 8, 0.1), v],
      [
        random([50, 6], 7).transpose(0, 1),
        random([6, 50], 8, 0.1),
        positive(random([50, 6], 9, 0.01), 1e-3).transpose(0, 1),
      ],
    ] as const) {
      const op = { kind: "adam-step", node: "optim.w.update", attrs: a, outShape: [6, 50] };
      const got = (await dispatchInChunks(tiny, op, [p, m, vv, step(4, [1])])).toFloat32Array();
      expect(Array.from(got)).toEqual(
        Array.from(onWasmViews(ex, "adam-step", a, [p, m, vv, step(4, [1])], [6, 50]).toFloat32Array()),
      );
    }
  });
});

describe("adam-moment → adam-step on wasm: a training loop", () => {
  for (const a of ADAM_LOOPS) {
    it(`5 steps of ${a.decoupled ? "AdamW" : "Adam"} (weightDecay ${a.weightDecay}) on a [4, 7] parameter, values kept on the executor`, () => {
      const shape = LOOP_SHAPE;
      const n = 28;
      const before = ex.inUseBytes;
      const l2 = a.decoupled ? 0 : a.weightDecay;
      const p0 = random(shape, 100);
      let p = ex.upload(p0);
      let m = ex.upload(new Tensor(new Float32Array(n), shape));
      let v = ex.upload(new Tensor(new Float32Array(n), shape));
      const rp = f64(p0);
      const torch = torchAdamLoop(rp, a); // updates rp in place
      const dispatch = loopDispatch(ex);
      for (let t = 1; t <= 5; t++) {
        const { gHost, g, s } = loopStep(ex, t);
        const param = l2 > 0 ? p : undefined;
        const m2 = dispatch("adam-moment", "optim.w.m", { beta: a.beta1, square: false, weightDecay: l2 }, [
          m,
          g,
          param,
        ]);
        const v2 = dispatch("adam-moment", "optim.w.v", { beta: a.beta2, square: true, weightDecay: l2 }, [
          v,
          g,
          param,
        ]);
        const p2 = dispatch("adam-step", "optim.w.update", { ...a }, [p, m2, v2, s]);
        torch.update([f64(gHost)]);
        expectNear(ex.download(m2), torch.expAvg[0]!);
        expectNear(ex.download(v2), torch.expAvgSq[0]!);
        expectNear(ex.download(p2), rp, 1e-6);
        for (const x of [p, m, v, g, s]) ex.release(x);
        [p, m, v] = [p2, m2, v2];
      }
      expect(moved(ex, p, p0)).toBeGreaterThan(a.lr);
      for (const x of [p, m, v]) ex.release(x);
      expect(ex.inUseBytes).toBe(before);
    });
  }
});
