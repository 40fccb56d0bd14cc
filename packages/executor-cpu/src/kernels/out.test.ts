// Every compute kernel honours `call.out`, the buffer planner's destination: it writes there, returns that very tensor,
// never reads its garbage, and touches nothing else of the buffer (planned values share one arena).
import { describe, expect, it } from "vitest";
import { AttnGraphError, ShapeError, Tensor, type Shape } from "@attngraph/tensor";
import { createCpuExecutor } from "../register-kernels.js";
import { pointwiseGrad, siluOp } from "@attngraph/graph";

/** silu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, x in x1). */
const SILU_GRAD = (pointwiseGrad(siluOp.pointwise!({}), 0) as { expr: unknown }).expr;

const ex = createCpuExecutor();

const values = (shape: Shape, seed: number) => {
  const n = shape.reduce((a, b) => a * b, 1);
  return Tensor.from(
    Array.from({ length: n }, (_, i) => Math.sin(seed * 3.7 + i * 1.1)),
    shape,
  );
};

const [B, H, L, S, D, E] = [2, 2, 3, 5, 4, 8];
const q = values([B, L, H, D], 1).permute([0, 2, 1, 3]); // [B, H, L, D], strided
const k = values([B, S, H, D], 2).permute([0, 2, 1, 3]);
const v = values([B, S, H, D], 3).permute([0, 2, 1, 3]);
const scores = values([B, H, L, S], 4);
const pad = Tensor.from([0, 0, 0, 1, 0, 1, 0, 0, 0, 0], [B, S]);

const attnMask = { causal: true, window: 2, alignment: "bottom-right" };
const lse = ex.dispatch({
  kind: "attention-lse",
  node: "lse",
  attrs: { ...attnMask, scale: 0.5 },
  inputs: [q, k, pad],
  outShape: [B, H, L],
});

interface Step {
  readonly kind: string;
  readonly inputs: (Tensor | undefined)[];
  readonly attrs: Record<string, unknown>;
  readonly outShape: Shape;
}

const steps: Step[] = [
  {
    kind: "projection",
    inputs: [values([B, L, E], 5), values([6, E], 6), values([6], 7)],
    attrs: {},
    outShape: [B, L, 6],
  },
  { kind: "out-proj", inputs: [values([B, L, E], 8), values([E, E], 9), undefined], attrs: {}, outShape: [B, L, E] },
  { kind: "score", inputs: [q, k], attrs: {}, outShape: [B, H, L, S] },
  {
    kind: "mask",
    inputs: [scores, pad],
    attrs: { causal: true, window: 2, alignment: "bottom-right" },
    outShape: [B, H, L, S],
  },
  { kind: "softmax", inputs: [scores], attrs: { scale: 0.5 }, outShape: [B, H, L, S] },
  { kind: "dropout", inputs: [scores], attrs: { rate: 0.3, seed: 9, training: true }, outShape: [B, H, L, S] },
  { kind: "dropout", inputs: [scores], attrs: { rate: 0.3, seed: 9, training: false }, outShape: [B, H, L, S] },
  { kind: "weighted-sum", inputs: [values([B, H, L, S], 10), v], attrs: {}, outShape: [B, H, L, D] },
  {
    kind: "attention",
    inputs: [q, k, v, pad],
    attrs: {
      causal: true,
      window: null,
      alignment: "top-left",
      scale: 0.5,
      dropoutRate: 0.2,
      dropoutSeed: 3,
      training: true,
    },
    outShape: [B, H, L, D],
  },
  // Backward ops.
  { kind: "sum-to", inputs: [scores], attrs: { shape: [H, 1, S] }, outShape: [H, 1, S] },
  { kind: "pad", inputs: [q], attrs: { axis: -2, before: 1, after: 2 }, outShape: [B, H, L + 3, D] },
  { kind: "linear-weight-grad", inputs: [values([B, L, 6], 11), values([B, L, E], 12)], attrs: {}, outShape: [6, E] },
  { kind: "softmax-grad", inputs: [scores, values([B, H, L, S], 13)], attrs: { scale: 0.5 }, outShape: [B, H, L, S] },
  { kind: "mask-grad", inputs: [values([B, H, L, S], 14), scores], attrs: { scale: 0.5 }, outShape: [B, H, L, S] },
  // Both norms' gradients, to the input and to the weight: the same inputs, each norm with its own eps.
  ...(
    [
      ["layer-norm", 1e-5],
      ["rms-norm", 1e-6],
    ] as const
  ).flatMap(([norm, eps]) => [
    {
      kind: `${norm}-grad`,
      inputs: [values([B, L, E], 15), values([B, L, E], 16), values([E], 17)],
      attrs: { eps },
      outShape: [B, L, E],
    },
    {
      kind: `${norm}-weight-grad`,
      inputs: [values([B, L, E], 15), values([B, L, E], 16)],
      attrs: { eps },
      outShape: [E],
    },
  ]),
  {
    kind: "gelu-grad",
    inputs: [values([B, L, E], 18), values([B, L, E], 19)],
    attrs: { approximate: "tanh" },
    outShape: [B, L, E],
  },
  {
    kind: "pointwise",
    inputs: [values([B, L, E], 18), values([B, L, E], 19)],
    attrs: { expr: SILU_GRAD },
    outShape: [B, L, E],
  },
  {
    kind: "embedding-grad",
    inputs: [Tensor.int32([3, 1, 3, 0, 2, 3], [B, L]) as unknown as Tensor, values([B, L, E], 20)],
    attrs: { rows: 5 },
    outShape: [5, E],
  },
  { kind: "attention-lse", inputs: [q, k, pad], attrs: { ...attnMask, scale: 0.5 }, outShape: [B, H, L] },
  ...(["q", "k", "v"] as const).map((wrt) => ({
    kind: "attention-grad",
    inputs: [q, k, v, values([B, H, L, D], 22), values([B, H, L, D], 23), lse, pad],
    attrs: { ...attnMask, scale: 0.5, dropoutRate: 0.2, dropoutSeed: 3, training: true, wrt },
    outShape: wrt === "q" ? [B, H, L, D] : [B, H, S, D],
  })),
  {
    kind: "cross-entropy-grad",
    inputs: [
      values([B, L, E], 21),
      Tensor.int32([3, -1, 7, 0, 2, 3], [B, L]) as unknown as Tensor,
      Tensor.from([0.5], []),
    ],
    attrs: { ignoreIndex: -1, reduction: "mean" },
    outShape: [B, L, E],
  },
];

/** `step` run as node "n", into `out` when given, on `inputs` (default: the step's own). */
const runStep = (step: Step, out?: Tensor, inputs = step.inputs) =>
  ex.dispatch({ kind: step.kind, node: "n", attrs: step.attrs, inputs, outShape: step.outShape, out });

const label = (s: Step) =>
  `${s.kind}${s.kind === "dropout" ? (s.attrs.training ? " (training)" : " (eval)") : ""}${s.attrs.wrt ? ` wrt ${String(s.attrs.wrt)}` : ""}`;

describe("call.out", () => {
  it.each(steps.map((s) => [label(s), s] as const))(
    "%s writes into out inside a larger arena and returns it",
    (_, step) => {
      const want = runStep(step);
      const size = step.outShape.reduce((a, b) => a * b, 1);
      const arena = new Float32Array(size + 10).fill(NaN); // garbage everywhere, 7 spare elements before, 3 after
      const out = new Tensor(arena, step.outShape, undefined, 7);
      const got = runStep(step, out);
      expect(got).toBe(out);
      expect(got.toArray()).toEqual(want.toArray());
      for (const i of [0, 1, 2, 3, 4, 5, 6, size + 7, size + 8, size + 9]) expect(arena[i]).toBeNaN();
    },
  );

  // The planner may give mask, softmax and dropout their input's own memory as `out` (their OpDefs declare inPlace: 0).
  it.each(steps.filter((s) => ["mask", "softmax", "dropout"].includes(s.kind)).map((s) => [label(s), s] as const))(
    "%s gives the same result in place (out is its input's memory)",
    (_, step) => {
      const want = runStep(step);
      const x = step.inputs[0]!.clone();
      const got = runStep(step, x, [x, ...step.inputs.slice(1)]);
      expect(got).toBe(x);
      expect(got.toArray()).toEqual(want.toArray());
    },
  );

  it("a planned output of the wrong shape is a ShapeError naming <node>.out", () => {
    const out = Tensor.zeros([B, H, L, S + 1]);
    const call = { kind: "score", node: "scores", attrs: {}, inputs: [q, k], outShape: [B, H, L, S] as Shape, out };
    expect(() => ex.dispatch(call)).toThrow(ShapeError);
    expect(() => ex.dispatch(call)).toThrow(/^scores\.out: /);
  });

  it("a planned output that is a strided view is an input error naming <node>.out", () => {
    const out = Tensor.zeros([B, H, S, L]).permute([0, 1, 3, 2]); // [B, H, L, S], not row-major
    let err: unknown;
    try {
      ex.dispatch({
        kind: "softmax",
        node: "weights",
        attrs: { scale: 1 },
        inputs: [scores],
        outShape: [B, H, L, S],
        out,
      });
    } catch (e) {
      err = e;
    }
    expect(AttnGraphError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "input", subject: "weights.out" });
  });
});
