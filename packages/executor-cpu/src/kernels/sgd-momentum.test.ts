import { describe, expect, it } from "vitest";
import { Tensor, type Shape } from "@attngraph/tensor";
import {
  BAD_STEP_VALUES,
  SGD_MOMENTUM_CASES,
  randomTensor as rand,
  sgdMomentumCase64,
  type SgdMomentumCase,
} from "@attngraph/testkit";
import { thrownError as thrown } from "@attngraph/testkit/test-helpers";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);

const run = (
  buf: Tensor,
  grad: Tensor,
  param: Tensor | undefined,
  t: Tensor,
  attrs: SgdMomentumCase,
  node = "optim.w.buf",
) =>
  cpu.dispatch({
    kind: "sgd-momentum",
    node,
    attrs: { ...attrs },
    inputs: [buf, grad, param, t],
    outShape: buf.shape,
  });

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
    const b = rand([4, 3, 5], 7);
    const g = rand([4, 3, 5], 8);
    const p = rand([4, 3, 5], 9);
    const bT = rand([5, 4, 3], 10).permute([1, 2, 0]); // [4, 3, 5], last axis strided
    const gT = rand([3, 5, 4], 11).permute([2, 0, 1]);
    const pT = rand([4, 5, 3], 12).permute([0, 2, 1]);
    expect(bT.isContiguous() || gT.isContiguous() || pT.isContiguous()).toBe(false);
    const a = { momentum: 0.9, dampening: 0.2, weightDecay: 0.01 };
    for (const t of [1, 4]) {
      for (const [x, y, z] of [
        [bT, g, p],
        [b, gT, p],
        [b, g, pT],
        [bT, gT, pT],
      ] as const) {
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

  it("scalar and empty tensors", () => {
    expectRef(
      run(Tensor.from([2], []), Tensor.from([3], []), Tensor.from([-1], []), step(2), {
        momentum: 0.9,
        dampening: 0.5,
        weightDecay: 0.5,
      }),
      [0.9 * 2 + 0.5 * 2.5],
    );
    expect(run(rand([2, 0], 1), rand([2, 0], 2), undefined, step(2), { momentum: 0.9 }).shape).toEqual([2, 0]);
  });

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

  it("a step that is not an integer >= 1 is an input error naming <node>.step", () => {
    for (const [t, shape] of BAD_STEP_VALUES) {
      const e = thrown(() => run(buf, grad, undefined, step(t, shape), { momentum: 0.9 }));
      expect([e.code, e.subject], `step ${t}`).toEqual(["input", "optim.w.buf.step"]);
      expect(e.message).toContain("optim.w.buf.step");
    }
  });

  it("a step of another shape than [] or [1] is a shape error naming <node>.step; missing, an input error", () => {
    let e = thrown(() => run(buf, grad, undefined, Tensor.from([1, 2], [2]), { momentum: 0.9 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.buf.step"]);
    e = thrown(() => run(buf, grad, undefined, Tensor.from([1], [1, 1]), { momentum: 0.9 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.buf.step"]);
    e = thrown(() =>
      cpu.dispatch({
        kind: "sgd-momentum",
        node: "b",
        attrs: { momentum: 0.9 },
        inputs: [buf, grad],
        outShape: buf.shape,
      }),
    );
    expect([e.code, e.subject]).toEqual(["input", "b.step"]);
  });

  it("weight decay without the param is an input error naming <node>.param", () => {
    const e = thrown(() => run(buf, grad, undefined, step(1), { momentum: 0.9, weightDecay: 0.1 }));
    expect([e.code, e.subject]).toEqual(["input", "optim.w.buf.param"]);
  });

  it("shapes that differ are a shape error naming <node>.grad or <node>.param", () => {
    let e = thrown(() => run(buf, rand([5, 3], 2), undefined, step(1), { momentum: 0.9 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.buf.grad"]);
    e = thrown(() => run(buf, grad, rand([15], 3), step(1), { momentum: 0.9, weightDecay: 0.1 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.buf.param"]);
  });

  it("invalid attributes are attr errors naming the field", () => {
    for (const [attrs, field] of [
      [{}, "momentum"],
      [{ momentum: -0.1 }, "momentum"],
      [{ momentum: NaN }, "momentum"],
      [{ momentum: Infinity }, "momentum"],
      [{ momentum: 0.9, dampening: 1.5 }, "dampening"],
      [{ momentum: 0.9, dampening: -1 }, "dampening"],
      [{ momentum: 0.9, weightDecay: -1 }, "weightDecay"],
      [{ momentum: 0.9, weightDecay: "0" }, "weightDecay"],
    ] as const) {
      const e = thrown(() => run(buf, grad, param, step(2), attrs as unknown as SgdMomentumCase));
      expect([e.code, e.subject]).toEqual(["attr", `optim.w.buf.${field}`]);
    }
  });
});
