import { describe, expect, it } from "vitest";
import { Tensor, type Shape } from "@attngraph/tensor";
import {
  SGD_MOMENTUM_CASES,
  eachStrided,
  stridedOperands,
  randomTensor as rand,
  sgdMomentumCase64,
  type SgdMomentumCase,
} from "@attngraph/testkit";
import {
  expectSgdMomentumErrors,
  expectSgdMomentumScalarAndEmpty,
  failingCallOf,
} from "@attngraph/testkit/test-helpers";
import { cpu, dispatchCpu } from "../test-dispatch.js";

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);

const run = (buf: Tensor, grad: Tensor, param: Tensor | undefined, t: Tensor, attrs: SgdMomentumCase) =>
  dispatchCpu("sgd-momentum", "optim.w.buf", { ...attrs }, [buf, grad, param, t], buf.shape);

/** Computed in float64 and rounded once: the kernel's output is the reference rounded to float32, bit for bit. */
const expectRef = (got: Tensor, want: ArrayLike<number>) =>
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(want, Math.fround));

describe("sgd-momentum kernel", () => {
  const buf = rand([3, 5], 1);
  const grad = rand([3, 5], 2, 3);
  const param = rand([3, 5], 3, 2);
  it("matches torch's buffer update in float64: momentum, dampening, weight decay; t = 1, 2, 7 as [] and [1]", () => {
    for (const a of SGD_MOMENTUM_CASES) {
      const p = a.weightDecay ? param : undefined;
      for (const [k, t] of [1, 2, 7].entries()) {
        expectRef(
          run(buf, grad, p, step(t, k % 2 ? [1] : []), a),
          sgdMomentumCase64(buf.toArray(), grad.toArray(), p?.toArray(), t, a),
        );
      }
    }
  });

  it("t = 1 clones d, ignoring the buffer and dampening (NaN in buf does not reach the output)", () => {
    const nan = Tensor.from(new Float32Array(15).fill(NaN), [3, 5]);
    const a = { momentum: 0.9, dampening: 0.5, weightDecay: 0.1 };
    expectRef(
      run(nan, grad, param, step(1), a),
      grad.toArray().map((g, k) => g + 0.1 * param.toArray()[k]!),
    );
  });

  it("param absent: the gradient alone (dampening and weightDecay default 0); present with weightDecay 0 adds nothing", () => {
    const b = Tensor.from([1, 2, 3, 4], [4]);
    const g = Tensor.from([0.5, -1, 2, 0], [4]);
    expect(run(b, g, undefined, step(2), { momentum: 0.5 }).toArray()).toEqual([1, 0, 3.5, 2]);
    expect(run(b, g, undefined, step(1), { momentum: 0.5 }).toArray()).toEqual([0.5, -1, 2, 0]);
    expect(run(buf, grad, param, step(3), { momentum: 0.8 }).toArray()).toEqual(
      run(buf, grad, undefined, step(3), { momentum: 0.8 }).toArray(),
    );
  });

  it("strided (transposed) buf, grad and param, each and all", () => {
    const [b, g, p, bT, gT, pT] = stridedOperands(rand, [4, 3, 5], 7);
    expect(bT.isContiguous() || gT.isContiguous() || pT.isContiguous()).toBe(false);
    const a = { momentum: 0.9, dampening: 0.2, weightDecay: 0.01 };
    for (const t of [1, 4]) {
      for (const [x, y, z] of eachStrided([b, g, p], [bT, gT, pT])) {
        expectRef(run(x, y, z, step(t), a), sgdMomentumCase64(x.toArray(), y.toArray(), z.toArray(), t, a));
      }
      expectRef(
        run(bT, gT, undefined, step(t), { momentum: 0.9 }),
        sgdMomentumCase64(bT.toArray(), gT.toArray(), undefined, t, { momentum: 0.9 }),
      );
    }
  });

  it("reads the step through a view (a slice of a steps tensor at an offset)", () => {
    const steps = Tensor.from([1, 2, 3, 4], [4]);
    const a = { momentum: 0.9 };
    const want = sgdMomentumCase64(buf.toArray(), grad.toArray(), undefined, 3, a);
    expectRef(run(buf, grad, undefined, new Tensor(steps.data, [1], [1], 2), a), want);
    expectRef(run(buf, grad, undefined, new Tensor(steps.data, [], [], 2), a), want);
    // The view at offset 0 holds 1: the first step.
    expectRef(run(buf, grad, undefined, new Tensor(steps.data, [], [], 0), a), grad.toArray());
  });

  it("scalar and empty tensors", () => expectSgdMomentumScalarAndEmpty(run, rand));

  it("writes into a planned output, never into its inputs", () => {
    const before = buf.toArray();
    const out = Tensor.from(new Float32Array(15), [3, 5]);
    const y = cpu.dispatch({
      kind: "sgd-momentum",
      node: "optim.w.buf",
      attrs: { momentum: 0.9 },
      inputs: [buf, grad, undefined, step(2)],
      outShape: [3, 5],
      out,
    });
    expect(y).toBe(out);
    expectRef(out, sgdMomentumCase64(buf.toArray(), grad.toArray(), undefined, 2, { momentum: 0.9 }));
    expect(buf.toArray()).toEqual(before);
  });

  it("errors name the node and field: invalid steps, the step's shape, weight decay without param, shapes, attributes", () => {
    expectSgdMomentumErrors(failingCallOf(dispatchCpu, "sgd-momentum", "optim.w.buf", [2, 3]));
  });
});
