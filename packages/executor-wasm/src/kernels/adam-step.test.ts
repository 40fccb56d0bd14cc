// adam-step on wasm against torch.optim.Adam's (AdamW's) update in float64 (testkit's adamStepCase64): Adam and AdamW, t from
// 1 to 1e6 as [] and [1], rows of every length mod 4, strided param, m and v (each and all), the step read through a
// view, invalid steps (a typed error naming <node>.step), chunks, and a five-step training loop of adam-moment →
// adam-step against a float64 loop of torch's step.
import { describe, expect, it } from "vitest";
import { Tensor, type Shape } from "@attngraph/tensor";
import { ADAM_LOOPS, ADAM_STEP_CASES, adamStepCase64, eachStrided, type AdamStepCase } from "@attngraph/testkit";
import { expectAdamLoop, expectAdamStepErrors } from "@attngraph/testkit/test-helpers";
import { f64, onWasm, onWasmViews, random, wasmExecutor, worst } from "../test-util.js";
import { dispatchInChunks, failingCall } from "../test-dispatch.js";
import { expectLoopReleased, loopOn } from "./test-optim.js";

const ex = await wasmExecutor();

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);
const run = (p: Tensor, m: Tensor, v: Tensor, t: Tensor, a: AdamStepCase, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "adam-step", { ...a }, [p, m, v, t], p.shape, "optim.w.update");
/** Float64 in the module too (β^t by the module's own pow): equal to the reference rounded once, within an ulp or so. */
const expectNear = (got: Tensor, want: ArrayLike<number>, abs = 1e-7, rel = 1e-6) =>
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), abs, rel)).toBeLessThanOrEqual(1);
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

  it("errors name the node and field: invalid steps, the step's shape, m and v shapes, attributes; the executor still works", () => {
    const before = ex.inUseBytes;
    expectAdamStepErrors(failingCall(ex, "adam-step", "optim.w.update", [2, 3]));
    expect(ex.inUseBytes, "nothing left allocated").toBe(before);
    const [p, m, v] = [random([2, 3], 1), random([2, 3], 2, 0.1), positive(random([2, 3], 3, 0.01), 1e-3)];
    expectNear(run(p, m, v, step(2), { lr: 1e-2 }), adamStepCase64(f64(p), f64(m), f64(v), 2, { lr: 1e-2 }));
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
    it(`5 steps of ${a.decoupled ? "AdamW" : "Adam"} (weightDecay ${a.weightDecay}) on a [4, 7] parameter, values kept on the executor`, () =>
      expectLoopReleased(ex, () => expectAdamLoop(loopOn(ex), a)));
  }
});
