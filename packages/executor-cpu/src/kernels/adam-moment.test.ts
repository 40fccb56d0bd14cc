import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { eachStrided, stridedOperands, randomTensor as rand } from "@attngraph/testkit";
import { expectAdamMomentErrors, failingCallOf } from "@attngraph/testkit/test-helpers";
import { cpu, dispatchCpu } from "../test-dispatch.js";

type Attrs = { beta: number; square?: boolean; weightDecay?: number };

const run = (state: Tensor, grad: Tensor, param: Tensor | undefined, attrs: Attrs) =>
  dispatchCpu("adam-moment", "optim.w.m", attrs, [state, grad, param], state.shape);

/** The float64 reference, the op's formula written out: g = grad + wd · param, beta · state + (1 − beta) · (g or g²). */
function adamMoment64(
  state: Tensor,
  grad: Tensor,
  param: Tensor | undefined,
  { beta, square = false, weightDecay = 0 }: Attrs,
): number[] {
  const s = state.toArray();
  const g = grad.toArray();
  const p = param?.toArray();
  return s.map((sv, k) => {
    const gk = g[k]! + (p ? weightDecay * p[k]! : 0);
    return beta * sv + (1 - beta) * (square ? gk * gk : gk);
  });
}

/** Computed in float64 and rounded once: the kernel's output is the reference rounded to float32, bit for bit. */
const expectRef = (got: Tensor, want: number[]) =>
  expect(Array.from(got.toFloat32Array())).toEqual(want.map(Math.fround));

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

  it("scalar and empty tensors", () => {
    expectRef(
      run(Tensor.from([2], []), Tensor.from([3], []), Tensor.from([-1], []), {
        beta: 0.9,
        square: true,
        weightDecay: 0.5,
      }),
      [0.9 * 2 + 0.1 * 2.5 * 2.5],
    );
    expect(run(rand([2, 0], 1), rand([2, 0], 2), undefined, { beta: 0.9 }).shape).toEqual([2, 0]);
  });

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
