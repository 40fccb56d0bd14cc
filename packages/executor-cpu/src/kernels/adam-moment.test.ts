import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import {
  adamMomentCase64,
  eachStrided,
  stridedOperands,
  randomTensor as rand,
  type AdamMomentCase,
} from "@attngraph/testkit";
import { expectAdamMomentErrors, expectAdamMomentScalarAndEmpty, failingCallOf } from "@attngraph/testkit/test-helpers";
import { cpu, dispatchCpu } from "../test-dispatch.js";

type Attrs = AdamMomentCase;

const run = (state: Tensor, grad: Tensor, param: Tensor | undefined, attrs: Attrs) =>
  dispatchCpu("adam-moment", "optim.w.m", attrs, [state, grad, param], state.shape);

/** The float64 reference (testkit's, the op's defaults filled in) on the tensors' elements. */
const adamMoment64 = (state: Tensor, grad: Tensor, param: Tensor | undefined, a: Attrs): Float64Array =>
  adamMomentCase64(state.toArray(), grad.toArray(), param?.toArray(), a);

/** Computed in float64 and rounded once: the kernel's output is the reference rounded to float32, bit for bit. */
const expectRef = (got: Tensor, want: ArrayLike<number>) =>
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(want, Math.fround));

describe("adam-moment kernel", () => {
  it("first and second moments, with and without weight decay, match the float64 reference", () => {
    const state = rand([3, 5], 1);
    const grad = rand([3, 5], 2, 3);
    const param = rand([3, 5], 3, 2);
    for (const square of [false, true]) {
      const s = square ? Tensor.from(state.toArray().map(Math.abs), state.shape) : state;
      for (const a of [
        { beta: 0.9, square },
        { beta: 0.999, square, weightDecay: 0.1 },
        { beta: 0, square, weightDecay: 0.5 },
      ]) {
        expectRef(
          run(s, grad, a.weightDecay ? param : undefined, a),
          adamMoment64(s, grad, a.weightDecay ? param : undefined, a),
        );
      }
    }
  });

  it("param absent: the gradient alone (square default false, weightDecay default 0)", () => {
    const state = Tensor.from([1, 2, 3, 4], [4]);
    const grad = Tensor.from([0.5, -1, 2, 0], [4]);
    expect(run(state, grad, undefined, { beta: 0.5 }).toArray()).toEqual([0.75, 0.5, 2.5, 2]);
    expect(run(state, grad, undefined, { beta: 0.5, square: true }).toArray()).toEqual([0.625, 1.5, 3.5, 2]);
  });

  it("param present with weightDecay 0 adds nothing", () => {
    const state = rand([2, 7], 4);
    const grad = rand([2, 7], 5);
    const a = { beta: 0.8, square: true };
    expect(run(state, grad, rand([2, 7], 6), a).toArray()).toEqual(run(state, grad, undefined, a).toArray());
  });

  it("strided (transposed) state, grad and param, each and all", () => {
    const [state, grad, param, stateT, gradT, paramT] = stridedOperands(rand, [4, 3, 5], 7);
    expect(stateT.isContiguous() || gradT.isContiguous() || paramT.isContiguous()).toBe(false);
    for (const square of [false, true]) {
      const a = { beta: 0.95, square, weightDecay: 0.01 };
      for (const [s, g, p] of eachStrided([state, grad, param], [stateT, gradT, paramT])) {
        expectRef(run(s, g, p, a), adamMoment64(s, g, p, a));
      }
      expectRef(
        run(stateT, gradT, undefined, { beta: 0.95, square }),
        adamMoment64(stateT, gradT, undefined, { beta: 0.95, square }),
      );
    }
  });

  it("scalar and empty tensors", () => expectAdamMomentScalarAndEmpty(run, rand));

  it("writes into a planned output, never into its inputs", () => {
    const state = rand([2, 3], 1);
    const before = state.toArray();
    const out = Tensor.from(new Float32Array(6), [2, 3]);
    const grad = rand([2, 3], 2);
    const y = cpu.dispatch({
      kind: "adam-moment",
      node: "optim.w.m",
      attrs: { beta: 0.9, square: false, weightDecay: 0 },
      inputs: [state, grad],
      outShape: [2, 3],
      out,
    });
    expect(y).toBe(out);
    expectRef(out, adamMoment64(state, grad, undefined, { beta: 0.9 }));
    expect(state.toArray()).toEqual(before);
  });

  it("errors name the node and field: weight decay without param, shapes, attributes", () => {
    expectAdamMomentErrors(failingCallOf(dispatchCpu, "adam-moment", "optim.w.m", [2, 3]));
  });
});
