// Every built-in op's backward rule against central finite differences in float64, on several shapes: the rule's
// gradient graph and the forward graph both run on the float64 references (test-eval64.ts), so what is tested is the
// rule itself. Kernels are compared with these references by the executor contract suite.
import { createOpRegistry, definePointwiseOp, GraphBuilder } from "@attngraph/graph";
import { describe, it } from "vitest";
import fc from "fast-check";
import { expectGradientsMatch, randomIds, randomValue, rngOf } from "./test-gradcheck.js";

/** A graph of one op between inputs (all differentiated unless int) and its output. */
function single(
  kind: string,
  shapes: Record<string, readonly number[]>,
  attrs: Record<string, unknown> = {},
  opts: {
    ints?: Record<string, number>;
    after?: (b: GraphBuilder, out: string) => string;
    builder?: GraphBuilder;
  } = {},
) {
  const b = opts.builder ?? new GraphBuilder();
  const rng = rngOf(Object.keys(shapes).length * 31 + kind.length);
  const values: Record<string, ReturnType<typeof randomValue>> = {};
  const inputs: Record<string, string> = {};
  for (const [slot, shape] of Object.entries(shapes)) {
    const int = opts.ints?.[slot];
    inputs[slot] = b.input(slot, shape, int === undefined ? "float32" : "int32");
    values[slot] = int === undefined ? randomValue(rng, shape) : randomIds(rng, shape, int);
  }
  let out = b.add(kind, "out", inputs, attrs);
  if (opts.after) out = opts.after(b, out);
  const wrt = Object.keys(shapes).filter((s) => opts.ints?.[s] === undefined);
  return { graph: b.output(out).build(), loss: out, wrt, values };
}

const softmaxAfter = (b: GraphBuilder, out: string) => b.add("softmax", "probs", { x: out }, { scale: 0.7 });

describe("backward rules against central differences (float64)", () => {
  it("projection and out-proj (with and without bias)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.boolean(),
        (b, t, i, o, bias) => {
          for (const kind of ["projection", "out-proj"]) {
            expectGradientsMatch(single(kind, { x: [b, t, i], weight: [o, i], ...(bias ? { bias: [o] } : {}) }));
          }
        },
      ),
      { numRuns: 6, seed: 1 },
    );
  });

  it("reshape, transpose and slice", () => {
    expectGradientsMatch(single("reshape", { x: [2, 6] }, { shape: [3, 4] }));
    expectGradientsMatch(single("transpose", { x: [2, 3, 4] }, { perm: [2, 0, 1] }));
    expectGradientsMatch(single("slice", { x: [2, 3, 7] }, { axis: -1, start: 2, size: 3 }));
    expectGradientsMatch(single("slice", { x: [4, 3] }, { axis: 0, start: 0, size: 1 }));
  });

  it("rope (whole head, partial rotary dims, offset, inverse)", () => {
    expectGradientsMatch(single("rope", { x: [1, 2, 3, 4] }));
    expectGradientsMatch(single("rope", { x: [2, 1, 4, 6] }, { rotaryDim: 4, positionOffset: 3, base: 100 }));
    expectGradientsMatch(single("rope", { x: [1, 2, 3, 4] }, { inverse: true }));
  });

  it("score and weighted-sum, also with grouped key/value heads", () => {
    fc.assert(
      fc.property(
        fc.constantFrom([2, 2], [4, 2], [3, 1]),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        ([h, hkv], l, s) => {
          expectGradientsMatch(single("score", { q: [2, h!, l, 4], k: [2, hkv!, s, 4] }));
          expectGradientsMatch(single("weighted-sum", { weights: [1, h!, l, s], v: [1, hkv!, s, 2] }));
        },
      ),
      { numRuns: 6, seed: 2 },
    );
  });

  it("mask: causal, window, padding, a 0/1 mask and an additive bias of each rank", () => {
    const pad = { shape: [2, 5], data: Float64Array.from([0, 0, 0, 1, 1, 0, 0, 0, 0, 1]) };
    const c = single("mask", { scores: [2, 2, 5, 5] }, { causal: true, window: 2 }, { after: softmaxAfter });
    expectGradientsMatch(c);
    const rng = rngOf(3);
    for (const shape of [
      [4, 5],
      [2, 4, 5],
      [2, 1, 4, 5],
    ] as const) {
      const bb = new GraphBuilder();
      const sc = bb.input("scores", [2, 2, 4, 5]);
      const kp = bb.input("keyPaddingMask", [2, 5]);
      const bias = bb.input("bias", shape);
      const m = bb.add(
        "mask",
        "masked",
        { scores: sc, keyPaddingMask: kp, bias },
        { scale: 0.5, causal: true, alignment: "bottom-right" },
      );
      const out = bb.add("softmax", "probs", { x: m });
      expectGradientsMatch({
        graph: bb.output(out).build(),
        loss: out,
        wrt: ["scores", "bias"],
        values: { scores: randomValue(rng, [2, 2, 4, 5]), keyPaddingMask: pad, bias: randomValue(rng, shape) },
      });
    }
  });

  it("alibi, softmax (fully masked rows get 0) and dropout (the same mask backward)", () => {
    expectGradientsMatch(single("alibi", { scores: [1, 3, 4, 4] }, { scale: 0.5 }, { after: softmaxAfter }));
    expectGradientsMatch(single("softmax", { x: [2, 3, 5] }, { scale: 0.3 }));
    expectGradientsMatch(single("dropout", { x: [3, 7] }, { rate: 0.4, seed: 11, training: true }));
  });

  it("layer norm, gelu (both forms) and add with broadcasting", () => {
    expectGradientsMatch(single("layer-norm", { x: [2, 3, 6], weight: [6], bias: [6] }, { eps: 1e-5 }));
    expectGradientsMatch(single("layer-norm", { x: [4, 5] }));
    expectGradientsMatch(single("gelu", { x: [3, 5] }));
    expectGradientsMatch(single("gelu", { x: [3, 5] }, { approximate: "tanh" }));
    expectGradientsMatch(single("add", { a: [2, 3, 4], b: [1, 3, 1] }));
    expectGradientsMatch(single("add", { a: [4], b: [2, 3, 4] }));
  });

  it("relu, alone and after a projection (its rule reads relu's output, as PyTorch's does)", () => {
    // Uniform values in (−1, 1): none lands within the finite-difference step of the kink at 0.
    expectGradientsMatch(single("relu", { x: [3, 5] }));
    const relu = (b: GraphBuilder, out: string) => b.add("relu", "act", { x: out });
    expectGradientsMatch(single("projection", { x: [2, 3, 4], weight: [6, 4], bias: [6] }, {}, { after: relu }));
  });

  it("rms-norm (with and without weight), silu, and mul (broadcast either side)", () => {
    expectGradientsMatch(single("rms-norm", { x: [2, 3, 5], weight: [5] }, { eps: 1e-6 }));
    expectGradientsMatch(single("rms-norm", { x: [4, 6] }, { eps: 1e-2 }));
    expectGradientsMatch(single("silu", { x: [3, 5] }));
    expectGradientsMatch(single("mul", { a: [2, 3, 4], b: [2, 3, 4] }));
    expectGradientsMatch(single("mul", { a: [2, 3, 4], b: [4] }));
    expectGradientsMatch(single("mul", { a: [1, 3, 1], b: [2, 3, 4] }));
  });

  it("a SiLU-gated MLP: mul(silu(gate(x)), up(x)), x reaching the loss through both branches", () => {
    const b = new GraphBuilder();
    const rng = rngOf(77);
    const x = b.input("x", [2, 3, 4]);
    const wg = b.input("wg", [6, 4]);
    const wu = b.input("wu", [6, 4]);
    const n = b.add("rms-norm", "norm", { x }, { eps: 1e-6 });
    const gate = b.add("silu", "act", { x: b.add("projection", "gate", { x: n, weight: wg }) });
    const out = b.add("mul", "out", { a: gate, b: b.add("projection", "up", { x: n, weight: wu }) });
    const values = { x: randomValue(rng, [2, 3, 4]), wg: randomValue(rng, [6, 4]), wu: randomValue(rng, [6, 4]) };
    expectGradientsMatch({ graph: b.output(out).build(), loss: out, wrt: ["x", "wg", "wu"], values });
  });

  it("embedding (repeated ids accumulate) and cross-entropy (every reduction, ignored targets)", () => {
    expectGradientsMatch(single("embedding", { ids: [2, 6], weight: [4, 3] }, {}, { ints: { ids: 4 } }));
    // Learned positions: the table's rows offset..offset+T-1 get the gradient, the others 0; ids get none.
    expectGradientsMatch(
      single(
        "position-embedding",
        { ids: [2, 3], weight: [7, 4] },
        { offset: 2 },
        { ints: { ids: 4 }, after: softmaxAfter },
      ),
    );
    expectGradientsMatch(single("position-embedding", { ids: [5], weight: [5, 2] }, {}, { ints: { ids: 4 } }));
    for (const reduction of ["mean", "sum", "none"]) {
      expectGradientsMatch(
        single("cross-entropy", { logits: [2, 3, 5], targets: [2, 3] }, { reduction }, { ints: { targets: 5 } }),
      );
      expectGradientsMatch(
        single(
          "cross-entropy",
          { logits: [6, 4], targets: [6] },
          { reduction, ignoreIndex: 2 },
          { ints: { targets: 4 } },
        ),
      );
    }
  });

  it("the fused ops: linear-gelu, add-layer-norm, attention", () => {
    expectGradientsMatch(single("linear-gelu", { x: [2, 3, 4], weight: [5, 4], bias: [5] }));
    expectGradientsMatch(single("add-layer-norm", { a: [2, 3, 4], b: [1, 3, 4], weight: [4], bias: [4] }));
    expectGradientsMatch(
      single(
        "attention",
        { q: [1, 4, 3, 2], k: [1, 2, 5, 2], v: [1, 2, 5, 3] },
        { causal: true, alignment: "bottom-right", scale: 0.6 },
      ),
    );
    expectGradientsMatch(
      single(
        "attention",
        { q: [2, 2, 3, 2], k: [2, 2, 3, 2], v: [2, 2, 3, 2] },
        { scale: 0.6, dropoutRate: 0.3, dropoutSeed: 5, training: true },
      ),
    );
  });

  // Elementwise ops as expressions: the gradient of every input is derived (derive()), not written by hand.
  const el = (name: string) => ({ op: "input", name, index: [] });
  const call = (op: string, ...args: unknown[]) => ({ op, args });

  it("a pointwise node of three inputs with a where, a tanh and a division: every input's derived gradient", () => {
    const expr = call(
      "where",
      call("gt", el("x0"), 0),
      call("mul", el("x1"), call("tanh", el("x2"))),
      call("div", call("mul", el("x0"), el("x2")), call("add", 1, call("abs", el("x1")))),
    );
    expectGradientsMatch(single("pointwise", { x0: [3, 4], x1: [3, 4], x2: [3, 4] }, { expr }));
  });

  it("a user op declared by its expression alone (definePointwiseOp) gets its gradient, for each input", () => {
    const gatedSoftplus = definePointwiseOp({
      kind: "gated-softplus",
      doc: "log(1 + exp(a)) · sigmoid(b)",
      inputs: [{ name: "a" }, { name: "b" }],
      expr: call("mul", call("log", call("add", 1, call("exp", el("a")))), call("sigmoid", el("b"))),
    });
    const builder = new GraphBuilder({ registry: createOpRegistry([gatedSoftplus]) });
    expectGradientsMatch(single("gated-softplus", { a: [2, 5], b: [2, 5] }, {}, { builder }));
  });
});
