import { describe, expect, it } from "vitest";
import { Tensor, compare, type Shape } from "@attngraph/tensor";
import {
  ADAM_LOOPS,
  ADAM_STEP_CASES,
  adamStepCase64,
  eachStrided,
  valuesOf,
  mulberry32,
  randomTensor,
  type AdamStepCase,
} from "@attngraph/testkit";
import { expectAdamLoop, expectAdamStepErrors, failingCallOf } from "@attngraph/testkit/test-helpers";
import { cpu, dispatchCpu } from "../test-dispatch.js";
import { adamMomentKernel } from "./adam-moment.js";
import { adamStepKernel } from "./adam-step.js";
import { expectChunksAsOneCall } from "./test-chunked.js";

const rand = (shape: Shape, seed: number, scale = 1, offset = 0) => {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => offset + scale * (next() * 2 - 1)),
    shape,
  );
};

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);

const run = (param: Tensor, m: Tensor, v: Tensor, t: Tensor, attrs: AdamStepCase) =>
  dispatchCpu("adam-step", "optim.w.update", { ...attrs }, [param, m, v, t], param.shape);

const near = (got: Tensor | ArrayLike<number>, want: ArrayLike<number>, tol = { abs: 1e-6, rel: 1e-6 }) => {
  const r = compare(got, want, tol);
  expect(r.ok, JSON.stringify(r.worst)).toBe(true);
};

describe("adam-step kernel", () => {
  const p = rand([3, 6], 1);
  const m = rand([3, 6], 2, 0.1);
  const v = rand([3, 6], 3, 0.01, 0.011); // in (0.001, 0.021): v >= 0
  it("matches torch's update in float64 for Adam and AdamW, t from 1 to 1e6, the step as [] and [1]", () => {
    for (const a of ADAM_STEP_CASES) {
      for (const [k, t] of [1, 2, 10, 1000, 1e6].entries()) {
        const want = adamStepCase64(p.toArray(), m.toArray(), v.toArray(), t, a);
        // Computed in float64 and rounded once.
        expect(Array.from(run(p, m, v, step(t, k % 2 ? [1] : []), a).toFloat32Array())).toEqual(
          Array.from(want, Math.fround),
        );
      }
    }
  });

  it("decoupled false ignores weightDecay; decoupled true shrinks the param by 1 − lr · weightDecay", () => {
    const zero = Tensor.from(new Float32Array(18), [3, 6]);
    expect(run(p, zero, v, step(3), { lr: 0.1, weightDecay: 0.5 }).toArray()).toEqual(p.toArray());
    near(
      run(p, zero, v, step(3), { lr: 0.1, weightDecay: 0.5, decoupled: true }),
      p.toArray().map((x) => x * 0.95),
    );
    // m = v = 0 (no gradient reached the element): the param stays, never NaN.
    expect(run(p, zero, zero, step(1), { lr: 0.1 }).toArray()).toEqual(p.toArray());
  });

  it("strided (transposed) param, m and v, each and all", () => {
    const pT = rand([6, 3], 4).permute([1, 0]);
    const mT = rand([6, 3], 5, 0.1).permute([1, 0]);
    const vT = rand([6, 3], 6, 0.01, 0.011).permute([1, 0]);
    expect(pT.isContiguous() || mT.isContiguous() || vT.isContiguous()).toBe(false);
    for (const a of ADAM_STEP_CASES) {
      for (const [pp, mm, vv] of eachStrided([p, m, v], [pT, mT, vT])) {
        const want = adamStepCase64(pp.toArray(), mm.toArray(), vv.toArray(), 7, a);
        expect(Array.from(run(pp, mm, vv, step(7, [1]), a).toFloat32Array())).toEqual(Array.from(want, Math.fround));
      }
    }
  });

  it("reads the step through a view (a slice of a steps tensor at an offset)", () => {
    const steps = Tensor.from([1, 2, 3, 4], [4]);
    const t3 = new Tensor(steps.data, [1], [1], 2);
    const want = adamStepCase64(p.toArray(), m.toArray(), v.toArray(), 3, { lr: 1e-2 });
    expect(Array.from(run(p, m, v, t3, { lr: 1e-2 }).toFloat32Array())).toEqual(Array.from(want, Math.fround));
    expect(Array.from(run(p, m, v, new Tensor(steps.data, [], [], 2), { lr: 1e-2 }).toFloat32Array())).toEqual(
      Array.from(want, Math.fround),
    );
  });

  it("errors name the node and field: invalid steps, the step's shape, m and v shapes, attributes", () => {
    expectAdamStepErrors(failingCallOf(dispatchCpu, "adam-step", "optim.w.update", [2, 3]));
  });
});

describe("adam-moment and adam-step in chunks", () => {
  it("with a signal and a tiny chunkWork: a Promise of bit for bit the numbers of one call (strided inputs)", async () => {
    const shape = [6, 40];
    const p = rand([40, 6], 1).permute([1, 0]);
    const m = rand(shape, 2, 0.1);
    const v = rand([40, 6], 3, 0.01, 0.011).permute([1, 0]);
    const momentCall = {
      kind: "adam-moment",
      node: "optim.w.v",
      attrs: { beta: 0.99, square: true, weightDecay: 0.01 },
      inputs: [v, m, p],
      outShape: shape,
    };
    const stepCall = {
      kind: "adam-step",
      node: "optim.w.update",
      attrs: { lr: 1e-2, weightDecay: 0.1, decoupled: true },
      inputs: [p, m, v, step(4, [1])],
      outShape: shape,
    };
    await expectChunksAsOneCall([
      [adamMomentKernel, momentCall],
      [adamStepKernel, stepCall],
    ]);
  });
});

describe("adam-moment → adam-step: a training loop", () => {
  for (const a of ADAM_LOOPS) {
    it(`5 steps of ${a.decoupled ? "AdamW" : "Adam"} (weightDecay ${a.weightDecay}) on a [4, 5] parameter match a float64 loop of torch's update`, () =>
      expectAdamLoop({ random: randomTensor, shape: [4, 5], ...valuesOf(cpu) }, a));
  }
});
