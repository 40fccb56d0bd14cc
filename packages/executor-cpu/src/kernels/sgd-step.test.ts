import { describe, expect, it } from "vitest";
import { Tensor, type Shape } from "@attngraph/tensor";
import {
  SGD_LOOPS,
  SGD_STEP_CASES,
  eachStrided,
  valuesOf,
  randomTensor as rand,
  sgdLoopLabel,
  sgdStepCase64,
  type SgdStepCase,
} from "@attngraph/testkit";
import {
  expectSgdLoop,
  expectSgdStepErrors,
  expectSgdStepScalarAndEmpty,
  failingCallOf,
} from "@attngraph/testkit/test-helpers";
import { cpu, dispatchCpu } from "../test-dispatch.js";
import { sgdMomentumKernel } from "./sgd-momentum.js";
import { sgdStepKernel } from "./sgd-step.js";
import { expectChunksAsOneCall } from "./test-chunked.js";

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);

const run = (param: Tensor, grad: Tensor, buf: Tensor | undefined, attrs: SgdStepCase) =>
  dispatchCpu("sgd-step", "optim.w.update", { ...attrs }, [param, grad, buf], param.shape);

describe("sgd-step kernel", () => {
  const p = rand([3, 6], 1);
  const g = rand([3, 6], 2, 2);
  const b = rand([3, 6], 3, 2);
  it("matches torch's update in float64: plain, weight decay, momentum, nesterov (bit for bit the reference rounded once)", () => {
    for (const a of SGD_STEP_CASES) {
      const buf = a.momentum ? b : undefined;
      expect(Array.from(run(p, g, buf, a).toFloat32Array())).toEqual(
        Array.from(sgdStepCase64(p.toArray(), g.toArray(), buf?.toArray(), a), Math.fround),
      );
    }
  });

  it("momentum 0 with buf absent (the defaults), and with a buf present that it never reads", () => {
    const x = Tensor.from([1, 2, 3, 4], [4]);
    const dx = Tensor.from([0.5, -1, 2, 0], [4]);
    expect(run(x, dx, undefined, { lr: 0.5 }).toArray()).toEqual([0.75, 2.5, 2, 4]);
    const nan = Tensor.from(new Float32Array(4).fill(NaN), [4]);
    expect(run(x, dx, nan, { lr: 0.5 }).toArray()).toEqual([0.75, 2.5, 2, 4]);
  });

  it("strided (transposed) param, grad and buf, each and all", () => {
    const pT = rand([6, 3], 4).permute([1, 0]);
    const gT = rand([6, 3], 5).permute([1, 0]);
    const bT = rand([6, 3], 6).permute([1, 0]);
    expect(pT.isContiguous() || gT.isContiguous() || bT.isContiguous()).toBe(false);
    for (const a of SGD_STEP_CASES) {
      for (const [pp, gg, bb] of eachStrided([p, g, b], [pT, gT, bT])) {
        const buf = a.momentum ? bb : undefined;
        expect(Array.from(run(pp, gg, buf, a).toFloat32Array())).toEqual(
          Array.from(sgdStepCase64(pp.toArray(), gg.toArray(), buf?.toArray(), a), Math.fround),
        );
      }
    }
  });

  it("scalar and empty tensors; a planned output", () => {
    expectSgdStepScalarAndEmpty(run, rand);
    const out = Tensor.from(new Float32Array(18), [3, 6]);
    const y = cpu.dispatch({ kind: "sgd-step", node: "u", attrs: { lr: 0.1 }, inputs: [p, g], outShape: [3, 6], out });
    expect(y).toBe(out);
    expect(Array.from(out.toFloat32Array())).toEqual(
      Array.from(sgdStepCase64(p.toArray(), g.toArray(), undefined, { lr: 0.1 }), Math.fround),
    );
  });

  it("errors name the node and field: momentum without buf, shapes, attributes", () => {
    expectSgdStepErrors(failingCallOf(dispatchCpu, "sgd-step", "optim.w.update", [2, 3]));
  });
});

describe("sgd-momentum and sgd-step in chunks", () => {
  it("with a signal and a tiny chunkWork: a Promise of bit for bit the numbers of one call (strided inputs)", async () => {
    const shape = [6, 40];
    const p = rand([40, 6], 1).permute([1, 0]);
    const g = rand(shape, 2);
    const b = rand([40, 6], 3).permute([1, 0]);
    const momentumCall = {
      kind: "sgd-momentum",
      node: "optim.w.buf",
      attrs: { momentum: 0.9, dampening: 0.1, weightDecay: 0.01 },
      inputs: [b, g, p, step(4, [1])],
      outShape: shape,
    };
    const stepCall = {
      kind: "sgd-step",
      node: "optim.w.update",
      attrs: { lr: 1e-2, momentum: 0.9, nesterov: true, weightDecay: 0.01 },
      inputs: [p, g, b],
      outShape: shape,
    };
    await expectChunksAsOneCall([
      [sgdMomentumKernel, momentumCall],
      [sgdStepKernel, stepCall],
    ]);
  });
});

describe("sgd-momentum → sgd-step: a training loop", () => {
  for (const a of SGD_LOOPS) {
    it(`5 steps of ${sgdLoopLabel(a)} (weightDecay ${a.weightDecay}) on a [4, 5] parameter match a float64 loop of torch's update`, () =>
      expectSgdLoop({ random: rand, shape: [4, 5], ...valuesOf(cpu) }, a));
  }
});
