import { describe, expect, it } from "vitest";
import { Tensor, compare, type Shape } from "@attngraph/tensor";
import {
  BAD_STEP_VALUES,
  ADAM_LOOPS,
  ADAM_STEP_CASES,
  adamStepCase64,
  mulberry32,
  torchAdamLoop,
  type AdamStepCase,
} from "@attngraph/testkit";
import { thrownError as thrown } from "@attngraph/testkit/test-helpers";
import { adamMomentKernel } from "./adam-moment.js";
import { adamStepKernel } from "./adam-step.js";
import { createCpuExecutor } from "../register-kernels.js";
import { expectChunksAsOneCall } from "./test-chunked.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const rand = (shape: Shape, seed: number, scale = 1, offset = 0) => {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => offset + scale * (next() * 2 - 1)),
    shape,
  );
};

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);

const run = (param: Tensor, m: Tensor, v: Tensor, t: Tensor, attrs: AdamStepCase, node = "optim.w.update") =>
  cpu.dispatch({ kind: "adam-step", node, attrs: { ...attrs }, inputs: [param, m, v, t], outShape: param.shape });

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
      for (const [pp, mm, vv] of [
        [pT, m, v],
        [p, mT, v],
        [p, m, vT],
        [pT, mT, vT],
      ] as const) {
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

  it("a step that is not an integer >= 1 is an input error naming <node>.step", () => {
    for (const [t, shape] of BAD_STEP_VALUES) {
      const e = thrown(() => run(p, m, v, step(t, shape), { lr: 1e-2 }));
      expect([e.code, e.subject], `step ${t}`).toEqual(["input", "optim.w.update.step"]);
      expect(e.message).toContain("optim.w.update.step");
    }
  });

  it("a step of another shape than [] or [1] is a shape error naming <node>.step; missing, an input error", () => {
    let e = thrown(() => run(p, m, v, Tensor.from([1, 2], [2]), { lr: 1e-2 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.step"]);
    e = thrown(() => run(p, m, v, Tensor.from([1], [1, 1]), { lr: 1e-2 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.step"]);
    e = thrown(() =>
      cpu.dispatch({ kind: "adam-step", node: "u", attrs: { lr: 1 }, inputs: [p, m, v], outShape: p.shape }),
    );
    expect([e.code, e.subject]).toEqual(["input", "u.step"]);
  });

  it("shapes that differ are a shape error naming <node>.m or <node>.v", () => {
    let e = thrown(() => run(p, rand([6, 3], 1), v, step(1), { lr: 1e-2 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.m"]);
    e = thrown(() => run(p, m, rand([18], 1), step(1), { lr: 1e-2 }));
    expect([e.code, e.subject]).toEqual(["shape", "optim.w.update.v"]);
  });

  it("invalid attributes are attr errors naming the field", () => {
    for (const [attrs, field] of [
      [{ lr: 0 }, "lr"],
      [{ lr: NaN }, "lr"],
      [{}, "lr"],
      [{ lr: 1, beta1: 1 }, "beta1"],
      [{ lr: 1, beta2: -0.5 }, "beta2"],
      [{ lr: 1, eps: -1 }, "eps"],
      [{ lr: 1, weightDecay: -1 }, "weightDecay"],
      [{ lr: 1, decoupled: "yes" }, "decoupled"],
    ] as const) {
      const e = thrown(() => run(p, m, v, step(1), attrs as unknown as AdamStepCase));
      expect([e.code, e.subject]).toEqual(["attr", `optim.w.update.${field}`]);
    }
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
    it(`5 steps of ${a.decoupled ? "AdamW" : "Adam"} (weightDecay ${a.weightDecay}) on a [4, 5] parameter match a float64 loop of torch's update`, () => {
      const shape = [4, 5];
      const l2 = a.decoupled ? 0 : a.weightDecay;
      let p = rand(shape, 100);
      let m = Tensor.from(new Float32Array(20), shape);
      let v = Tensor.from(new Float32Array(20), shape);
      const rp = Float64Array.from(p.toArray());
      const torch = torchAdamLoop(rp, a); // updates rp in place
      for (let t = 1; t <= 5; t++) {
        const g = rand(shape, 200 + t, 2);
        const gT = t % 2 === 0 ? rand([5, 4], 200 + t, 2).permute([1, 0]) : g; // even steps: a strided gradient
        const param = l2 > 0 ? p : undefined;
        const call = (kind: string, node: string, attrs: Record<string, unknown>, inputs: (Tensor | undefined)[]) => ({
          kind,
          node,
          attrs,
          inputs,
          outShape: shape,
        });
        m = cpu.dispatch(
          call("adam-moment", "optim.w.m", { beta: a.beta1, square: false, weightDecay: l2 }, [m, gT, param]),
        ) as Tensor;
        v = cpu.dispatch(
          call("adam-moment", "optim.w.v", { beta: a.beta2, square: true, weightDecay: l2 }, [v, gT, param]),
        ) as Tensor;
        p = cpu.dispatch(call("adam-step", "optim.w.update", { ...a }, [p, m, v, step(t, t % 2 ? [1] : [])])) as Tensor;
        torch.update([Float64Array.from(gT.toArray())]);
        near(m, torch.expAvg[0]!, { abs: 1e-7, rel: 1e-6 });
        near(v, torch.expAvgSq[0]!, { abs: 1e-7, rel: 1e-6 });
        near(p, rp, { abs: 1e-6, rel: 1e-6 });
      }
      const moved = p.toArray().reduce((w, x, k) => Math.max(w, Math.abs(x - rand(shape, 100).toArray()[k]!)), 0);
      expect(moved).toBeGreaterThan(a.lr);
    });
  }
});
