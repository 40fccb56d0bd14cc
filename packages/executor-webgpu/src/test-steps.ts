// What the optimizer tests (adam.test.ts, sgd.test.ts) share: the layouts each operand is tried in, the closeness check,
// the step counts they feed adam-step and sgd-momentum (the ops whose step t is checked twice: on the host for an
// upload, in the shader for a value computed on the GPU) with the checks of what each gives, the error tables, and the
// 5-step training loop on the GPU that each optimizer runs against its float64 transcription.
import { expect } from "vitest";
import { type AnyTensor, Tensor, compare } from "@attngraph/tensor";
import type { GpuTensor } from "./gpu-tensor.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, type Input } from "./test-gpu.js";

export const TOL = { abs: 1e-5, rel: 1e-5 };
export const values = (t: AnyTensor): number[] => Array.from(t.toFloat32Array());

/** `got` within `tol` of `want` elementwise, NaN where NaN is expected. */
export function expectClose(got: Tensor, want: readonly number[], label: string, tol = TOL): void {
  const r = compare(got, want, tol, { equalNan: true });
  expect({ label, ok: r.ok, worst: r.worst, failures: r.failures }).toMatchObject({ ok: true });
}

export type Layout = "dense" | "permuted" | "spaced";
export const LAYOUTS: readonly Layout[] = ["dense", "permuted", "spaced"];

/** A tensor of t's shape, all NaN: junk that shows whether a kernel reads it. */
export const nanLike = (t: Tensor): Tensor => Tensor.from(new Array<number>(t.size).fill(Number.NaN), t.shape);

/** GpuOps with what the optimizer tests run: their inputs in each layout and step form, and the checks on those. */
export class OptimizerOps extends GpuOps {
  /** `t` as a GPU value in `layout`: uploaded, uploaded transposed and transposed back (perm reverses the axes), spaced. */
  async inLayout(t: Tensor, layout: Layout): Promise<Tensor | GpuTensor> {
    if (layout === "dense") return t;
    if (layout === "permuted")
      return this.permuted(
        t,
        t.shape.map((_, i) => t.rank - 1 - i),
      );
    return this.spaced(t);
  }

  /** Runs `kind` and checks its result: `shape`, and within `tol` of `want`. */
  async expectRun(
    kind: string,
    attrs: Record<string, unknown>,
    inputs: readonly Input[],
    shape: readonly number[],
    want: readonly number[],
    label: string,
    tol = TOL,
  ): Promise<void> {
    const got = await this.run(kind, attrs, inputs, shape);
    expect(got.shape, label).toEqual(shape);
    expectClose(got, want, label, tol);
  }

  /**
   * Runs `kind` on every pair of layouts of the first two operands (named by their keys, in order), the third (if
   * any) in a layout mixed from those two (i + mix · j, so each meets every layout), absent operands left absent; with
   * `t`, the step count follows as [] and [1] in turn. Each result must have `shape` and be close to `want`.
   */
  async expectEveryLayout(
    kind: string,
    attrs: Record<string, unknown>,
    operands: Readonly<Record<string, Tensor | undefined>>,
    shape: readonly number[],
    want: readonly number[],
    mix: 1 | 2,
    t?: number,
  ): Promise<void> {
    for (const [i, la] of LAYOUTS.entries()) {
      for (const [j, lb] of LAYOUTS.entries()) {
        const layouts = [la, lb, LAYOUTS[(i + mix * j) % 3]!];
        const inputs: Input[] = [];
        const named: string[] = [];
        for (const [k, [name, value]] of Object.entries(operands).entries()) {
          inputs.push(value && (await this.inLayout(value, layouts[k]!)));
          if (value) named.push(`${name} ${layouts[k]}`);
        }
        const stepShape = (i + j) % 2 === 0 ? [] : [1];
        if (t !== undefined) inputs.push(Tensor.from([t], stepShape));
        const label = t === undefined ? named.join(", ") : `t ${t}, ${named.join(", ")}, step [${stepShape}]`;
        await this.expectRun(kind, attrs, inputs, shape, want, label);
      }
    }
  }

  /**
   * `kind` on scalars (each input a [] tensor of the number given, or absent) gives a [] result of `want`: exactly, or
   * within `tol` where float32 rounding makes the float64 reference differ.
   */
  async expectScalar(
    kind: string,
    attrs: Record<string, unknown>,
    inputs: readonly (number | undefined)[],
    want: readonly number[],
    tol?: { abs: number; rel: number },
  ): Promise<void> {
    const tensors = inputs.map((x) => (x === undefined ? undefined : Tensor.from([x], [])));
    const one = await this.run(kind, attrs, tensors, []);
    expect(one.shape).toEqual([]);
    if (tol) expectClose(one, want, "scalar", tol);
    else expect(values(one)).toEqual(want);
  }

  /** t computed on the GPU (t/2 + t/2): a value with no host copy, which only the shader can check. */
  gpuStep(t: number, shape: number[] = [1]): Promise<GpuTensor> {
    const half = Tensor.from([t / 2], shape);
    return this.dispatch("add", {}, [half, half], shape);
  }

  /** The step count 3 in each form a kernel must read it in: [] and [1], uploaded, views into an upload, computed. */
  async stepsOf3(): Promise<[string, Tensor | GpuTensor][]> {
    const slice = () =>
      this.dispatch("slice", { axis: 0, start: 3, size: 1 }, [Tensor.from([0, Number.NaN, 2.5, 3, -1], [5])], [1]);
    return [
      ["[] upload", Tensor.from([3], [])],
      ["[1] upload", Tensor.from([3], [1])],
      ["[1] spaced view", await this.spaced(Tensor.from([3], [1]))],
      ["[1] slice of [0, NaN, 2.5, 3, -1]", await slice()],
      ["[] reshape of that slice", await this.dispatch("reshape", { shape: [] }, [await slice()], [])],
      ["[] computed", await this.gpuStep(3, [])],
      ["[1] computed", await this.gpuStep(3, [1])],
    ];
  }

  /**
   * A bad step count from the host is an "input" error naming `subject` (`<node>.step`) with the value it got, found
   * without a readback: `error(step)` is what the dispatch with that step threw.
   */
  async expectHostStepErrors(subject: string, error: (step: Tensor | GpuTensor) => Promise<unknown>): Promise<void> {
    for (const [label, step, got] of await this.#badHostSteps()) {
      const before = this.ex.stats.readbacks;
      const e = await error(step);
      expect({ label, e }).toMatchObject({ label, e: { code: "input", subject, got } });
      expect(this.ex.stats.readbacks, label).toBe(before);
    }
  }

  /**
   * A bad step count computed on the GPU (no host copy) makes every output element NaN, and is never read back:
   * `dispatch(step)` is the dispatch with that step.
   */
  async expectGpuStepsNaN(dispatch: (step: GpuTensor) => Promise<GpuTensor>): Promise<void> {
    for (const [label, step] of await this.#badGpuSteps()) {
      const before = this.ex.stats.readbacks;
      const out = await dispatch(step);
      expect(this.ex.stats.readbacks, `${label}: no readback`).toBe(before);
      const got = await this.ex.download(out);
      this.ex.release(out);
      expect(values(got).every(Number.isNaN), `${label}: all NaN`).toBe(true);
    }
  }

  /** Each case's dispatch of `kind` on node `node` fails with its code and subject. */
  async expectErrors(
    kind: string,
    node: string,
    outShape: readonly number[],
    cases: readonly ErrorCase[],
  ): Promise<void> {
    for (const [k, [attrs, inputs, code, subject]] of cases.entries())
      expect(await this.error(kind, attrs, inputs, outShape, node), `case ${k}: ${subject}`).toMatchObject({
        code,
        subject,
      });
  }

  /** Bad step counts from the host, each with the value its error reports: plain uploads, a spaced view, a slice. */
  async #badHostSteps(): Promise<[string, Tensor | GpuTensor, string][]> {
    return [
      ["0", Tensor.from([0], []), "0"],
      ["-1", Tensor.from([-1], [1]), "-1"],
      ["2.5", Tensor.from([2.5], [1]), "2.5"],
      ["NaN", Tensor.from([Number.NaN], []), "NaN"],
      ["Infinity", Tensor.from([Number.POSITIVE_INFINITY], []), "Infinity"],
      ["a spaced view of 0.5", await this.spaced(Tensor.from([0.5], [1])), "0.5"],
      [
        "a slice at 2.5",
        await this.dispatch(
          "slice",
          { axis: 0, start: 2, size: 1 },
          [Tensor.from([0, Number.NaN, 2.5, 3, -1], [5])],
          [1],
        ),
        "2.5",
      ],
    ];
  }

  /** Bad step counts computed on the GPU (no host copy), which make every output element NaN. */
  async #badGpuSteps(): Promise<[string, GpuTensor][]> {
    const big = Tensor.from([3e38], [1]);
    return [
      ["0.5", await this.gpuStep(0.5)],
      ["2.5", await this.gpuStep(2.5, [])],
      ["0", await this.gpuStep(0)],
      ["-2", await this.gpuStep(-2)],
      ["NaN", await this.gpuStep(Number.NaN)],
      ["+Infinity", await this.dispatch("add", {}, [big, big], [1])],
    ];
  }
}

/** An error case: attributes and inputs, then the error's code and subject (`<node>.<field>`). */
export type ErrorCase = readonly [
  attrs: Record<string, unknown>,
  inputs: readonly Input[],
  code: string,
  subject: string,
];

/**
 * The step input's errors for an op whose inputs are `withStep(step)` on node `node`: a step that is not [] or [1]
 * is a "shape" error, an absent or int32 one an "input" error.
 */
export function stepInputErrors(
  attrs: Record<string, unknown>,
  withStep: (step: AnyTensor | undefined) => readonly Input[],
  node: string,
): ErrorCase[] {
  return [
    [attrs, withStep(Tensor.from([1, 2], [2])), "shape", `${node}.step`],
    [attrs, withStep(Tensor.from([1], [1, 1])), "shape", `${node}.step`],
    [attrs, withStep(undefined), "input", `${node}.step`],
    [attrs, withStep(Tensor.int32([1], [])), "input", `${node}.step`],
  ];
}

// ---- the training loop ----

/** Loss ½‖p − c‖² on `shape`, so the gradient is p − c (the GPU computes it with `add`, the references in float64). */
export class QuadraticLoss {
  readonly p0: Tensor;
  readonly c: Tensor;
  readonly negC: Tensor;

  constructor(readonly shape: number[]) {
    this.p0 = randomTensor(shape, 31);
    this.c = randomTensor(shape, 32);
    this.negC = Tensor.from(
      values(this.c).map((x) => -x),
      shape,
    );
  }

  /**
   * `steps` optimizer steps on the GPU from p0, nothing read back before the end; the result downloaded. Step t is
   * uploaded each step in `uploadShape(t)`, or counted on the GPU (t + 1 by `add`, starting from 0); `update` gives
   * the new parameter from p, the gradient and t, and releases any state of its own it replaces.
   */
  async train(
    ops: GpuOps,
    steps: number,
    stepFrom: "upload" | "gpu",
    uploadShape: (t: number) => number[],
    update: (p: GpuTensor, grad: GpuTensor, t: GpuTensor) => Promise<GpuTensor>,
  ): Promise<Tensor> {
    const ex = ops.ex;
    let p = (await ops.value(this.p0))!;
    const minusC = (await ops.value(this.negC))!;
    const one = (await ops.value(Tensor.from([1], [1])))!;
    let t: GpuTensor = (await ops.value(Tensor.from([0], [1])))!;
    const readbacks = ex.stats.readbacks;
    for (let step = 1; step <= steps; step++) {
      if (stepFrom === "gpu") {
        const next = await ops.dispatch("add", {}, [t, one], [1]);
        ex.release(t);
        t = next;
      } else {
        ex.release(t);
        t = (await ops.value(Tensor.from([step], uploadShape(step))))!;
      }
      const grad = await ops.dispatch("add", {}, [p, minusC], this.shape);
      const p2 = await update(p, grad, t);
      for (const old of [p, grad]) ex.release(old);
      p = p2;
    }
    expect(ex.stats.readbacks).toBe(readbacks);
    const got = await ex.download(p);
    for (const x of [p, minusC, one, t]) ex.release(x);
    return got;
  }

  /** `got` is `want`, and moved away from p0: by more than 0.1 on average (less would be a step that did little). */
  expectTrained(got: Tensor, want: readonly number[], label: string): void {
    expectClose(got, want, label);
    const moved = values(got).map((x, i) => Math.abs(x - values(this.p0)[i]!));
    expect(moved.reduce((s, x) => s + x, 0) / moved.length).toBeGreaterThan(0.1);
  }
}
