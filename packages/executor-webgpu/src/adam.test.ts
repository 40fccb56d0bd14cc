// The optimizer kernels adam-moment and adam-step against float64 loop references written here from the op
// declarations (packages/graph/src/ops/adam.ts) and torch.optim.Adam / AdamW's update: dense, transposed and spaced
// (offset, doubled strides, NaN junk between) inputs, every attribute variant, the step t as [] and [1] (uploaded, a
// view of an upload, or computed on the GPU), bias corrections near 1 and at large t, a 5-step Adam and AdamW loop run
// on the GPU with nothing read back, and the errors: a bad t from the host is an "input" error naming `<node>.step`,
// a bad t computed on the GPU (no host copy, never read back) makes every output element NaN.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { LAYOUTS, OptimizerOps, QuadraticLoss, TOL, expectClose, stepInputErrors, values } from "./test-steps.js";

const webgpu = createWebGpuExecutor();
const ops = new OptimizerOps(webgpu);
afterAll(() => webgpu.dispose());

// ---- float64 references (torch.optim.Adam's formulas) ----

function moment64(
  state: readonly number[],
  grad: readonly number[],
  param: readonly number[] | undefined,
  beta: number,
  square: boolean,
  weightDecay: number,
): number[] {
  return state.map((s, i) => {
    const g = grad[i]! + weightDecay * (param ? param[i]! : 0);
    return beta * s + (1 - beta) * (square ? g * g : g);
  });
}

// A type alias, not an interface: it must pass where attributes are a Record<string, unknown>.
type StepAttrs = {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  decoupled: boolean;
};

function step64(
  param: readonly number[],
  m: readonly number[],
  v: readonly number[],
  t: number,
  a: StepAttrs,
): number[] {
  const bc1 = 1 - a.beta1 ** t;
  const bc2 = 1 - a.beta2 ** t;
  return param.map((p0, i) => {
    const p = a.decoupled ? p0 * (1 - a.lr * a.weightDecay) : p0;
    return p - (a.lr / bc1) * (m[i]! / (Math.sqrt(v[i]!) / Math.sqrt(bc2) + a.eps));
  });
}

/** The second moment is never negative: |x| of seeded values. */
const positive = (shape: number[], seed: number, scale = 1): Tensor =>
  Tensor.from(values(randomTensor(shape, seed, scale)).map(Math.abs), shape);

const ADAM: StepAttrs = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false };

// ---- adam-moment ----

describe("adam-moment", () => {
  const shape = [3, 5, 7];
  const state = randomTensor(shape, 1, 0.5);
  const stateSq = positive(shape, 2, 0.5);
  const grad = randomTensor(shape, 3, 2);
  const param = randomTensor(shape, 4);

  for (const square of [false, true]) {
    for (const weightDecay of [0, 0.01]) {
      it(`square ${square}, weightDecay ${weightDecay}: every layout of state, grad and param`, async () => {
        const s = square ? stateSq : state;
        const beta = square ? 0.999 : 0.9;
        const want = moment64(values(s), values(grad), values(param), beta, square, weightDecay);
        const operands = { state: s, grad, param };
        await ops.expectEveryLayout("adam-moment", { beta, square, weightDecay }, operands, shape, want, 1);
      });
    }
  }

  it("param absent (no weight decay): state and grad only, dense and strided; absent attributes take the defaults", async () => {
    for (const square of [false, true]) {
      const want = moment64(values(state), values(grad), undefined, 0.8, square, 0);
      for (const layout of LAYOUTS) {
        const inputs = [await ops.inLayout(state, layout), await ops.inLayout(grad, layout)];
        expectClose(
          await ops.run("adam-moment", { beta: 0.8, square, weightDecay: 0 }, inputs, shape),
          want,
          `square ${square}, ${layout}`,
        );
        expectClose(
          await ops.run("adam-moment", { beta: 0.8, square, weightDecay: 0 }, [...inputs, undefined], shape),
          want,
          `square ${square}, ${layout}, undefined param`,
        );
      }
    }
    expectClose(
      await ops.run("adam-moment", { beta: 0.8 }, [state, grad], shape),
      moment64(values(state), values(grad), undefined, 0.8, false, 0),
      "defaults",
    );
  });

  it("beta 0 gives g (or g²); past one workgroup; a scalar and an empty tensor", async () => {
    expectClose(
      await ops.run("adam-moment", { beta: 0, square: true, weightDecay: 0 }, [state, grad], shape),
      values(grad).map((g) => g * g),
      "beta 0",
    );
    const big = randomTensor([70, 33], 5);
    const bigG = randomTensor([70, 33], 6);
    expectClose(
      await ops.run(
        "adam-moment",
        { beta: 0.9, square: false, weightDecay: 0 },
        [await ops.permuted(big, [1, 0]), bigG],
        [70, 33],
      ),
      moment64(values(big), values(bigG), undefined, 0.9, false, 0),
      "[70, 33]",
    );
    await ops.expectScalar("adam-moment", { beta: 0.5, square: false, weightDecay: 0 }, [2, 4], [3]);
    const empty = await ops.run(
      "adam-moment",
      { beta: 0.5, square: false, weightDecay: 0 },
      [Tensor.from([], [0, 3]), Tensor.from([], [0, 3])],
      [0, 3],
    );
    expect(empty.shape).toEqual([0, 3]);
  });

  it("NaN propagates from state and grad", async () => {
    const got = await ops.run(
      "adam-moment",
      { beta: 0.9, square: false, weightDecay: 0 },
      [Tensor.from([Number.NaN, 1], [2]), Tensor.from([1, Number.NaN], [2])],
      [2],
    );
    expect(values(got).every(Number.isNaN)).toBe(true);
  });

  it("errors name the node and field", async () => {
    const s = Tensor.from([1, 2], [2]);
    const base = { beta: 0.9, square: false, weightDecay: 0 };
    await ops.expectErrors(
      "adam-moment",
      "m1",
      [2],
      [
        [{ ...base, beta: 1 }, [s, s], "attr", "m1.beta"],
        [{ ...base, beta: -0.1 }, [s, s], "attr", "m1.beta"],
        [{ square: false }, [s, s], "attr", "m1.beta"],
        [{ ...base, square: "yes" }, [s, s], "attr", "m1.square"],
        [{ ...base, weightDecay: -1 }, [s, s, s], "attr", "m1.weightDecay"],
        [{ ...base, weightDecay: 0.1 }, [s, s], "input", "m1.param"],
        [base, [s, Tensor.from([1, 2, 3], [3])], "shape", "m1.grad"],
        [base, [s, s, Tensor.from([1], [1])], "shape", "m1.param"],
        [base, [s], "input", "m1.grad"],
        [base, [s, Tensor.int32([1, 2], [2])], "input", "m1.grad"],
      ],
    );
  });
});

// ---- adam-step ----

describe("adam-step", () => {
  const shape = [4, 3, 6];
  const param = randomTensor(shape, 11);
  const m = randomTensor(shape, 12, 0.1);
  const v = positive(shape, 13, 0.01);

  for (const decoupled of [false, true]) {
    for (const weightDecay of [0, 0.1]) {
      it(`decoupled ${decoupled}, weightDecay ${weightDecay}: every layout, step [] and [1]`, async () => {
        const attrs = { ...ADAM, lr: 0.01, decoupled, weightDecay };
        for (const t of [1, 3]) {
          const want = step64(values(param), values(m), values(v), t, attrs);
          const operands = { param, m, v };
          await ops.expectEveryLayout("adam-step", attrs, operands, shape, want, 2, t);
        }
      });
    }
  }

  it("the step as [] and [1], uploaded, a view into an upload, and computed on the GPU", async () => {
    const want = step64(values(param), values(m), values(v), 3, ADAM);
    for (const [label, step] of await ops.stepsOf3())
      expectClose(await ops.run("adam-step", { ...ADAM }, [param, m, v, step], shape), want, label);
    // Absent attributes take the op's defaults (beta1 0.9, beta2 0.999, eps 1e-8, no weight decay).
    expectClose(await ops.run("adam-step", { lr: 1e-3 }, [param, m, v, Tensor.from([3], [])], shape), want, "defaults");
  });

  it("bias corrections: near 1 (beta2 0.999 at t = 1), large t up to 1e6, betas near 1, beta 0", async () => {
    const cases: [beta1: number, beta2: number, ts: number[]][] = [
      [0.9, 0.999, [1, 2, 1000, 123456, 1e6]],
      [0.99, 0.99999, [1]],
      [0.9999, 0.9999999, [1, 1000, 1e6]],
      [0, 0, [1]],
      [0, 0.5, [7]],
      [0.5, 0, [2]],
    ];
    for (const [beta1, beta2, ts] of cases) {
      for (const t of ts) {
        const attrs = { ...ADAM, beta1, beta2 };
        expectClose(
          await ops.run("adam-step", attrs, [param, m, v, Tensor.from([t], [])], shape),
          step64(values(param), values(m), values(v), t, attrs),
          `beta1 ${beta1}, beta2 ${beta2}, t ${t}`,
        );
        expectClose(
          await ops.run("adam-step", attrs, [param, m, v, await ops.gpuStep(t)], shape),
          step64(values(param), values(m), values(v), t, attrs),
          `computed t ${t}`,
        );
      }
    }
  });

  it("past one workgroup, transposed; eps 0; a scalar and an empty tensor", async () => {
    const p = randomTensor([40, 50], 21);
    const mm = randomTensor([40, 50], 22, 0.1);
    const vv = positive([40, 50], 23, 0.1);
    const attrs = { ...ADAM, eps: 0, weightDecay: 0.05, decoupled: true };
    const inputs = [
      await ops.permuted(p, [1, 0]),
      await ops.spaced(mm),
      await ops.permuted(vv, [1, 0]),
      Tensor.from([4], [1]),
    ];
    expectClose(
      await ops.run("adam-step", attrs, inputs, [40, 50]),
      step64(values(p), values(mm), values(vv), 4, attrs),
      "[40, 50]",
    );
    await ops.expectScalar("adam-step", ADAM, [1, 0.5, 0.25, 2], step64([1], [0.5], [0.25], 2, ADAM), TOL);
    const empty = await ops.run(
      "adam-step",
      ADAM,
      [Tensor.from([], [2, 0]), Tensor.from([], [2, 0]), Tensor.from([], [2, 0]), Tensor.from([1], [])],
      [2, 0],
    );
    expect(empty.shape).toEqual([2, 0]);
  });

  it("a bad t from the host is an input error naming <node>.step, checked without a readback", async () => {
    await ops.expectHostStepErrors("opt.p.step", (step) =>
      ops.error("adam-step", ADAM, [param, m, v, step], shape, "opt.p"),
    );
  });

  it("a bad t computed on the GPU (no host copy) makes every output NaN, and is never read back", async () => {
    await ops.expectGpuStepsNaN((step) => ops.dispatch("adam-step", ADAM, [param, m, v, step], shape));
  });

  it("errors name the node and field", async () => {
    const s = Tensor.from([1, 2], [2]);
    const t = Tensor.from([1], []);
    await ops.expectErrors(
      "adam-step",
      "upd",
      [2],
      [
        [{ ...ADAM, lr: 0 }, [s, s, s, t], "attr", "upd.lr"],
        [{ beta1: 0.9 }, [s, s, s, t], "attr", "upd.lr"],
        [{ ...ADAM, lr: Number.POSITIVE_INFINITY }, [s, s, s, t], "attr", "upd.lr"],
        [{ ...ADAM, beta1: 1 }, [s, s, s, t], "attr", "upd.beta1"],
        [{ ...ADAM, beta2: 1.5 }, [s, s, s, t], "attr", "upd.beta2"],
        [{ ...ADAM, eps: -1 }, [s, s, s, t], "attr", "upd.eps"],
        [{ ...ADAM, weightDecay: -1 }, [s, s, s, t], "attr", "upd.weightDecay"],
        [{ ...ADAM, decoupled: 1 }, [s, s, s, t], "attr", "upd.decoupled"],
        [ADAM, [s, Tensor.from([1], [1]), s, t], "shape", "upd.m"],
        [ADAM, [s, s, Tensor.from([1, 2, 3], [3]), t], "shape", "upd.v"],
        ...stepInputErrors(ADAM, (step) => [s, s, s, step], "upd"),
      ],
    );
  });
});

// ---- a training loop ----

describe("a 5-step Adam loop (torch.optim.Adam / AdamW) on the GPU", () => {
  const shape = [6, 9];
  const loss = new QuadraticLoss(shape);

  function adam64(a: StepAttrs, steps: number): number[] {
    let p = values(loss.p0);
    let m = new Array<number>(p.length).fill(0);
    let v = new Array<number>(p.length).fill(0);
    const cs = values(loss.c);
    for (let t = 1; t <= steps; t++) {
      const grad = p.map((x, i) => x - cs[i]!);
      const wd = a.decoupled ? 0 : a.weightDecay;
      m = moment64(m, grad, p, a.beta1, false, wd);
      v = moment64(v, grad, p, a.beta2, true, wd);
      p = step64(p, m, v, t, a);
    }
    return p;
  }

  const variants: [string, StepAttrs, "upload" | "gpu"][] = [
    [
      "Adam, t uploaded each step",
      { lr: 0.05, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false },
      "upload",
    ],
    [
      "Adam with L2 weight decay, t uploaded each step",
      { lr: 0.05, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1, decoupled: false },
      "upload",
    ],
    [
      "AdamW, t counted on the GPU",
      { lr: 0.05, beta1: 0.8, beta2: 0.99, eps: 1e-6, weightDecay: 0.1, decoupled: true },
      "gpu",
    ],
  ];
  for (const [label, a, stepFrom] of variants) {
    it(`${label}: matches the float64 loop, and reads nothing back before the end`, async () => {
      const zeros = Tensor.zeros(shape);
      let m = (await ops.value(zeros))!;
      let v = (await ops.value(zeros))!;
      const wd = a.decoupled ? 0 : a.weightDecay;
      const got = await loss.train(
        ops,
        5,
        stepFrom,
        () => [],
        async (p, grad, t) => {
          const m2 = await ops.dispatch(
            "adam-moment",
            { beta: a.beta1, square: false, weightDecay: wd },
            [m, grad, p],
            shape,
          );
          const v2 = await ops.dispatch(
            "adam-moment",
            { beta: a.beta2, square: true, weightDecay: wd },
            [v, grad, p],
            shape,
          );
          const p2 = await ops.dispatch("adam-step", { ...a }, [p, m2, v2, t], shape);
          for (const old of [m, v]) webgpu.release(old);
          [m, v] = [m2, v2];
          return p2;
        },
      );
      for (const x of [m, v]) webgpu.release(x);
      // It moved: 5 steps of lr 0.05 move the parameters by about 0.2 on average (less where p0 is near c).
      loss.expectTrained(got, adam64(a, 5), label);
    });
  }
});
