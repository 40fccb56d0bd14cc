// The optimizer kernels sgd-momentum and sgd-step against float64 loop references written here from the op
// declarations (packages/graph/src/ops/sgd.ts) and torch.optim.SGD's update (maximize=False): dense, transposed and
// spaced (offset, doubled strides, NaN junk between) inputs, every attribute variant (momentum with its first-step
// clone, dampening, nesterov, weight decay; momentum 0 with the buffer absent), the step t as [] and [1] (uploaded, a
// view of an upload, or computed on the GPU), a 5-step loop run on the GPU with nothing read back, checked against a
// separate float64 transcription of torch.optim.SGD.step, and the errors: a bad t from the host is an "input" error
// naming `<node>.step`, a bad t computed on the GPU (no host copy, never read back) makes every output element NaN.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { randomTensor } from "./test-helpers.js";
import { LAYOUTS, OptimizerOps, QuadraticLoss, expectClose, nanLike, stepInputErrors, values } from "./test-steps.js";

const webgpu = createWebGpuExecutor();
const ops = new OptimizerOps(webgpu);
afterAll(() => webgpu.dispose());

// ---- float64 references (the op declarations, from torch.optim.SGD's formulas) ----

interface MomentumAttrs {
  momentum: number;
  dampening: number;
  weightDecay: number;
}

interface StepAttrs {
  lr: number;
  momentum: number;
  nesterov: boolean;
  weightDecay: number;
}

const decayed = (grad: readonly number[], param: readonly number[] | undefined, weightDecay: number): number[] =>
  grad.map((g, i) => (weightDecay !== 0 ? g + weightDecay * param![i]! : g));

/** sgd-momentum: d at t = 1 (buf not read), else momentum · buf + (1 − dampening) · d. */
function momentum64(
  buf: readonly number[],
  grad: readonly number[],
  param: readonly number[] | undefined,
  t: number,
  a: MomentumAttrs,
): number[] {
  return decayed(grad, param, a.weightDecay).map((d, i) =>
    t === 1 ? d : a.momentum * buf[i]! + (1 - a.dampening) * d,
  );
}

/** sgd-step: param − lr · u, u = d (momentum 0), buf, or d + momentum · buf (nesterov). */
function step64(
  param: readonly number[],
  grad: readonly number[],
  buf: readonly number[] | undefined,
  a: StepAttrs,
): number[] {
  return decayed(grad, param, a.weightDecay).map((d, i) => {
    const u = a.momentum === 0 ? d : a.nesterov ? d + a.momentum * buf![i]! : buf![i]!;
    return param[i]! - a.lr * u;
  });
}

// ---- sgd-momentum ----

describe("sgd-momentum", () => {
  const shape = [3, 5, 7];
  const buf = randomTensor(shape, 1, 0.5);
  const grad = randomTensor(shape, 2, 2);
  const param = randomTensor(shape, 3);

  const variants: MomentumAttrs[] = [
    { momentum: 0.9, dampening: 0, weightDecay: 0 },
    { momentum: 0.9, dampening: 0.1, weightDecay: 0.01 },
    { momentum: 0.5, dampening: 1, weightDecay: 0.2 },
    { momentum: 0, dampening: 0.3, weightDecay: 0 },
  ];
  for (const a of variants) {
    it(`momentum ${a.momentum}, dampening ${a.dampening}, weightDecay ${a.weightDecay}: every layout, t = 1 (clone) and 3, step [] and [1]`, async () => {
      for (const t of [1, 3]) {
        const want = momentum64(values(buf), values(grad), values(param), t, a);
        const operands = { buf, grad, param };
        await ops.expectEveryLayout("sgd-momentum", { ...a }, operands, shape, want, 1, t);
      }
    });
  }

  it("t = 1 clones d: the old buffer is not read (a NaN buffer gives d), dampening does not apply", async () => {
    const a = { momentum: 0.9, dampening: 0.5, weightDecay: 0.1 };
    const want = decayed(values(grad), values(param), 0.1);
    expectClose(
      await ops.run("sgd-momentum", a, [nanLike(buf), grad, param, Tensor.from([1], [])], shape),
      want,
      "uploaded t = 1",
    );
    expectClose(
      await ops.run("sgd-momentum", a, [nanLike(buf), grad, param, await ops.gpuStep(1)], shape),
      want,
      "computed t = 1",
    );
    const at2 = await ops.run("sgd-momentum", a, [nanLike(buf), grad, param, Tensor.from([2], [])], shape);
    expect(values(at2).every(Number.isNaN), "t = 2 reads the buffer").toBe(true);
  });

  it("param absent (no weight decay), dense and strided; absent attributes take the defaults (dampening 0, weightDecay 0)", async () => {
    const a = { momentum: 0.8, dampening: 0.25, weightDecay: 0 };
    const want = momentum64(values(buf), values(grad), undefined, 4, a);
    for (const layout of LAYOUTS) {
      const inputs = [await ops.inLayout(buf, layout), await ops.inLayout(grad, layout)];
      expectClose(
        await ops.run("sgd-momentum", a, [...inputs, undefined, Tensor.from([4], [1])], shape),
        want,
        `${layout}, param absent`,
      );
    }
    // Param given with weightDecay 0 contributes nothing (even an infinite one: 0 · ∞ is never formed).
    const inf = Tensor.from(new Array<number>(buf.size).fill(Number.POSITIVE_INFINITY), shape);
    expectClose(
      await ops.run("sgd-momentum", a, [buf, grad, inf, Tensor.from([4], [])], shape),
      want,
      "infinite param, no decay",
    );
    const defaults = momentum64(values(buf), values(grad), undefined, 2, {
      momentum: 0.9,
      dampening: 0,
      weightDecay: 0,
    });
    expectClose(
      await ops.run("sgd-momentum", { momentum: 0.9 }, [buf, grad, undefined, Tensor.from([2], [])], shape),
      defaults,
      "defaults",
    );
  });

  it("the step as [] and [1], uploaded, a view into an upload, and computed on the GPU", async () => {
    const a = { momentum: 0.9, dampening: 0.1, weightDecay: 0.01 };
    const want = momentum64(values(buf), values(grad), values(param), 3, a);
    for (const [label, step] of await ops.stepsOf3())
      expectClose(await ops.run("sgd-momentum", a, [buf, grad, param, step], shape), want, label);
  });

  it("past one workgroup, transposed; a scalar and an empty tensor; NaN propagates", async () => {
    const a = { momentum: 0.9, dampening: 0, weightDecay: 0.05 };
    const b = randomTensor([70, 33], 5);
    const g = randomTensor([70, 33], 6);
    const p = randomTensor([70, 33], 7);
    const inputs = [await ops.permuted(b, [1, 0]), g, await ops.spaced(p), Tensor.from([2], [1])];
    expectClose(
      await ops.run("sgd-momentum", a, inputs, [70, 33]),
      momentum64(values(b), values(g), values(p), 2, a),
      "[70, 33]",
    );
    await ops.expectScalar("sgd-momentum", { momentum: 0.5, dampening: 0.5 }, [2, 4, undefined, 2], [3]);
    const empty = await ops.run(
      "sgd-momentum",
      { momentum: 0.5 },
      [Tensor.from([], [0, 3]), Tensor.from([], [0, 3]), undefined, Tensor.from([1], [])],
      [0, 3],
    );
    expect(empty.shape).toEqual([0, 3]);
    const nan = await ops.run(
      "sgd-momentum",
      { momentum: 0.9 },
      [Tensor.from([Number.NaN, 1], [2]), Tensor.from([1, Number.NaN], [2]), undefined, Tensor.from([2], [])],
      [2],
    );
    expect(values(nan).every(Number.isNaN)).toBe(true);
  });

  it("a bad t from the host is an input error naming <node>.step, checked without a readback", async () => {
    const a = { momentum: 0.9, dampening: 0, weightDecay: 0 };
    await ops.expectHostStepErrors("opt.p.buf.step", (step) =>
      ops.error("sgd-momentum", a, [buf, grad, undefined, step], shape, "opt.p.buf"),
    );
  });

  it("a bad t computed on the GPU (no host copy) makes every output NaN, and is never read back", async () => {
    const a = { momentum: 0.9, dampening: 0, weightDecay: 0.01 };
    await ops.expectGpuStepsNaN((step) => ops.dispatch("sgd-momentum", a, [buf, grad, param, step], shape));
  });

  it("errors name the node and field", async () => {
    const s = Tensor.from([1, 2], [2]);
    const t = Tensor.from([1], []);
    const base = { momentum: 0.9, dampening: 0, weightDecay: 0 };
    await ops.expectErrors(
      "sgd-momentum",
      "mb",
      [2],
      [
        [{ dampening: 0 }, [s, s, undefined, t], "attr", "mb.momentum"],
        [{ ...base, momentum: -0.1 }, [s, s, undefined, t], "attr", "mb.momentum"],
        [{ ...base, momentum: Number.NaN }, [s, s, undefined, t], "attr", "mb.momentum"],
        [{ ...base, dampening: 1.5 }, [s, s, undefined, t], "attr", "mb.dampening"],
        [{ ...base, dampening: -0.5 }, [s, s, undefined, t], "attr", "mb.dampening"],
        [{ ...base, weightDecay: -1 }, [s, s, s, t], "attr", "mb.weightDecay"],
        [{ ...base, weightDecay: 0.1 }, [s, s, undefined, t], "input", "mb.param"],
        [base, [s, Tensor.from([1, 2, 3], [3]), undefined, t], "shape", "mb.grad"],
        [base, [s, s, Tensor.from([1], [1]), t], "shape", "mb.param"],
        ...stepInputErrors(base, (step) => [s, s, undefined, step], "mb"),
        [base, [s], "input", "mb.grad"],
      ],
    );
  });
});

// ---- sgd-step ----

describe("sgd-step", () => {
  const shape = [4, 3, 6];
  const param = randomTensor(shape, 11);
  const grad = randomTensor(shape, 12);
  const buf = randomTensor(shape, 13, 0.5);

  const variants: StepAttrs[] = [
    { lr: 0.1, momentum: 0, nesterov: false, weightDecay: 0 },
    { lr: 0.1, momentum: 0, nesterov: false, weightDecay: 0.05 },
    { lr: 0.01, momentum: 0.9, nesterov: false, weightDecay: 0 },
    { lr: 0.01, momentum: 0.9, nesterov: false, weightDecay: 0.1 },
    { lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0 },
    { lr: 0.05, momentum: 0.5, nesterov: true, weightDecay: 0.01 },
  ];
  for (const a of variants) {
    it(`lr ${a.lr}, momentum ${a.momentum}, nesterov ${a.nesterov}, weightDecay ${a.weightDecay}: every layout`, async () => {
      const withBuf = a.momentum > 0;
      const want = step64(values(param), values(grad), withBuf ? values(buf) : undefined, a);
      const operands = { param, grad, buf: withBuf ? buf : undefined };
      await ops.expectEveryLayout("sgd-step", { ...a }, operands, shape, want, 2);
    });
  }

  it("momentum 0: buf absent (two inputs or undefined), or given and not read (a NaN buffer); absent attributes take the defaults", async () => {
    const a = { lr: 0.1, momentum: 0, nesterov: false, weightDecay: 0.01 };
    const want = step64(values(param), values(grad), undefined, a);
    expectClose(await ops.run("sgd-step", a, [param, grad], shape), want, "two inputs");
    expectClose(await ops.run("sgd-step", a, [param, grad, undefined], shape), want, "undefined buf");
    expectClose(await ops.run("sgd-step", a, [param, grad, nanLike(buf)], shape), want, "NaN buf, not read");
    expectClose(
      await ops.run("sgd-step", { lr: 0.1 }, [param, grad], shape),
      step64(values(param), values(grad), undefined, { lr: 0.1, momentum: 0, nesterov: false, weightDecay: 0 }),
      "defaults",
    );
    const m = { lr: 0.1, momentum: 0.9 };
    expectClose(
      await ops.run("sgd-step", m, [param, grad, buf], shape),
      step64(values(param), values(grad), values(buf), { ...m, nesterov: false, weightDecay: 0 }),
      "defaults with momentum",
    );
  });

  it("past one workgroup, transposed; a scalar and an empty tensor; NaN propagates", async () => {
    const a = { lr: 0.02, momentum: 0.9, nesterov: true, weightDecay: 0.05 };
    const p = randomTensor([40, 50], 21);
    const g = randomTensor([40, 50], 22);
    const b = randomTensor([40, 50], 23);
    const inputs = [await ops.permuted(p, [1, 0]), await ops.spaced(g), await ops.permuted(b, [1, 0])];
    expectClose(await ops.run("sgd-step", a, inputs, [40, 50]), step64(values(p), values(g), values(b), a), "[40, 50]");
    await ops.expectScalar("sgd-step", { lr: 0.5 }, [1, 4], [-1]);
    const empty = await ops.run(
      "sgd-step",
      a,
      [Tensor.from([], [2, 0]), Tensor.from([], [2, 0]), Tensor.from([], [2, 0])],
      [2, 0],
    );
    expect(empty.shape).toEqual([2, 0]);
    const nan = await ops.run(
      "sgd-step",
      { lr: 0.1, momentum: 0.9 },
      [Tensor.from([Number.NaN, 1], [2]), Tensor.from([1, 1], [2]), Tensor.from([1, Number.NaN], [2])],
      [2],
    );
    expect(values(nan).every(Number.isNaN)).toBe(true);
  });

  it("errors name the node and field", async () => {
    const s = Tensor.from([1, 2], [2]);
    const base = { lr: 0.1, momentum: 0.9, nesterov: false, weightDecay: 0 };
    await ops.expectErrors(
      "sgd-step",
      "upd",
      [2],
      [
        [{ ...base, lr: 0 }, [s, s, s], "attr", "upd.lr"],
        [{ momentum: 0.9 }, [s, s, s], "attr", "upd.lr"],
        [{ ...base, lr: Number.POSITIVE_INFINITY }, [s, s, s], "attr", "upd.lr"],
        [{ ...base, momentum: -1 }, [s, s, s], "attr", "upd.momentum"],
        [{ ...base, nesterov: "yes" }, [s, s, s], "attr", "upd.nesterov"],
        [{ ...base, momentum: 0, nesterov: true }, [s, s], "attr", "upd.nesterov"],
        [{ ...base, weightDecay: -1 }, [s, s, s], "attr", "upd.weightDecay"],
        [base, [s, s], "input", "upd.buf"],
        [base, [s, Tensor.from([1], [1]), s], "shape", "upd.grad"],
        [base, [s, s, Tensor.from([1, 2, 3], [3])], "shape", "upd.buf"],
        [base, [s], "input", "upd.grad"],
        [base, [s, s, Tensor.int32([1, 2], [2])], "input", "upd.buf"],
      ],
    );
  });
});

// ---- a training loop ----

describe("a 5-step SGD loop (torch.optim.SGD) on the GPU", () => {
  const shape = [6, 9];
  const loss = new QuadraticLoss(shape);

  interface Sgd {
    lr: number;
    momentum: number;
    dampening: number;
    nesterov: boolean;
    weightDecay: number;
  }

  /** torch.optim.SGD.step (maximize=False) transcribed directly, in float64: not built from the op references above. */
  function sgd64(a: Sgd, steps: number): number[] {
    const p = values(loss.p0);
    const cs = values(loss.c);
    let buf: number[] | undefined;
    for (let t = 1; t <= steps; t++) {
      let dp = p.map((x, i) => x - cs[i]!);
      if (a.weightDecay !== 0) dp = dp.map((g, i) => g + a.weightDecay * p[i]!);
      if (a.momentum !== 0) {
        if (buf === undefined) buf = dp.slice();
        else buf = buf.map((b, i) => b * a.momentum + (1 - a.dampening) * dp[i]!);
        const bb = buf;
        dp = a.nesterov ? dp.map((g, i) => g + a.momentum * bb[i]!) : bb.slice();
      }
      for (let i = 0; i < p.length; i++) p[i] = p[i]! - a.lr * dp[i]!;
    }
    return p;
  }

  const SGD: Sgd = { lr: 0.05, momentum: 0, dampening: 0, nesterov: false, weightDecay: 0 };
  const variants: [string, Sgd, "upload" | "gpu"][] = [
    ["plain SGD (momentum 0, no buffer)", { ...SGD, lr: 0.1 }, "upload"],
    ["SGD with weight decay, momentum 0", { ...SGD, lr: 0.1, weightDecay: 0.1 }, "upload"],
    ["momentum 0.9, t uploaded each step", { ...SGD, momentum: 0.9 }, "upload"],
    [
      "momentum 0.8, dampening 0.2, weight decay 0.05, t counted on the GPU",
      { ...SGD, momentum: 0.8, dampening: 0.2, weightDecay: 0.05 },
      "gpu",
    ],
    [
      "nesterov momentum 0.9, weight decay 0.01, t counted on the GPU",
      { ...SGD, momentum: 0.9, nesterov: true, weightDecay: 0.01 },
      "gpu",
    ],
  ];
  for (const [label, a, stepFrom] of variants) {
    it(`${label}: matches the float64 loop, and reads nothing back before the end`, async () => {
      // The buffer before step 1 is never read (PyTorch clones d there): junk shows it.
      let buf: GpuTensor | undefined = a.momentum > 0 ? (await ops.value(nanLike(loss.p0)))! : undefined;
      const got = await loss.train(
        ops,
        5,
        stepFrom,
        (step) => (step % 2 === 0 ? [] : [1]),
        async (p, grad, t) => {
          let buf2: GpuTensor | undefined;
          if (buf !== undefined) {
            buf2 = await ops.dispatch(
              "sgd-momentum",
              { momentum: a.momentum, dampening: a.dampening, weightDecay: a.weightDecay },
              [buf, grad, p, t],
              shape,
            );
            webgpu.release(buf);
          }
          buf = buf2;
          return ops.dispatch(
            "sgd-step",
            { lr: a.lr, momentum: a.momentum, nesterov: a.nesterov, weightDecay: a.weightDecay },
            [p, grad, buf2],
            shape,
          );
        },
      );
      if (buf) webgpu.release(buf);
      loss.expectTrained(got, sgd64(a, 5), label);
    });
  }
});
