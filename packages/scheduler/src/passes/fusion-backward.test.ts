import { GraphBuilder, type OpGraph, type Ref } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { explain } from "../explain.js";
import { lower } from "../lower.js";
import { fakeExecutor } from "../test-executors.js";

interface Options {
  readonly heads?: number;
  readonly kvHeads?: number;
  readonly mask?: boolean;
  readonly dropout?: boolean;
  /** Which gradients the graph asks for (grad() leaves out the rules' nodes for the others). */
  readonly needs?: readonly ("q" | "k" | "v")[];
  /** A node of the chain or its backward that one more node (a softmax named "reader") reads. */
  readonly extraReader?: string;
}

/**
 * An attention chain and its backward exactly as grad()'s built-in rules lay it out (the scheduler may not depend on
 * @attngraph/autodiff, whose tests run on the runtime; autodiff's own tests lower real grad() output): the weighted-sum
 * rule (a score of the context's gradient and v; the transposed weights times that gradient), dropout's, softmax-grad,
 * mask-grad, the score rule (a weighted sum for dq, the transposed scores' gradient times q for dk), each key/value
 * gradient summed over head groups (reshape → sum-to → reshape) when heads are grouped.
 */
function trainingChain(o: Options = {}): OpGraph {
  const { heads: h = 4, kvHeads: hkv = 2, mask = true, dropout = true, needs = ["q", "k", "v"] } = o;
  const b = new GraphBuilder();
  const q = b.input("q", ["B", h, "T", 4]);
  const k = b.input("k", ["B", hkv, "T", 4]);
  const v = b.input("v", ["B", hkv, "T", 4]);
  const pad = b.input("pad", ["B", "T"]);
  const g = b.input("context.grad", ["B", h, "T", 4]);
  const drop = { rate: 0.1, seed: 5, training: true };
  const scores = b.add("score", "scores", { q, k });
  const masked = mask ? b.add("mask", "masked", { scores, keyPaddingMask: pad }, { causal: true }) : scores;
  const probs = b.add("softmax", "probs", { x: masked }, { scale: 0.5 });
  const weights = dropout ? b.add("dropout", "weights", { x: probs }, drop) : probs;
  const context = b.add("weighted-sum", "context", { weights, v });
  const outputs: Ref[] = [context];
  const groupSum = (product: Ref, name: string): Ref => {
    if (h === hkv) return product;
    const split = b.add("reshape", `${name}.groups`, { x: product }, { shape: ["B", hkv, h / hkv, "T", 4] });
    const sum = b.add("sum-to", `${name}.sum`, { x: split }, { shape: ["B", hkv, 1, "T", 4] });
    return b.add("reshape", `${name}.grad`, { x: sum }, { shape: ["B", hkv, "T", 4] });
  };
  if (needs.includes("v")) {
    const wT = b.add("transpose", "weights.t", { x: weights }, { perm: [0, 1, 3, 2] });
    outputs.push(groupSum(b.add("weighted-sum", h === hkv ? "v.grad" : "v.heads", { weights: wT, v: g }), "v"));
  }
  if (needs.includes("q") || needs.includes("k")) {
    const dWeights = b.add("score", "weights.grad", { q: g, k: v });
    const dProbs = dropout ? b.add("dropout", "probs.grad", { x: dWeights }, drop) : dWeights;
    const dMasked = b.add("softmax-grad", "masked.grad", { y: probs, grad: dProbs }, { scale: 0.5 });
    const dScores = mask ? b.add("mask-grad", "scores.grad", { grad: dMasked, masked }, { scale: 1 }) : dMasked;
    if (needs.includes("q")) outputs.push(b.add("weighted-sum", "q.grad", { weights: dScores, v: k }));
    if (needs.includes("k")) {
      const t = b.add("transpose", "scores.grad.t", { x: dScores }, { perm: [0, 1, 3, 2] });
      outputs.push(groupSum(b.add("weighted-sum", h === hkv ? "k.grad" : "k.heads", { weights: t, v: q }), "k"));
    }
  }
  if (o.extraReader) outputs.push(b.add("softmax", "reader", { x: o.extraReader }, { scale: 1 }));
  for (const out of outputs) b.output(out);
  return b.build();
}

const fused = [fakeExecutor("cpu", "fused")];
const LS = [
  "scores",
  "masked",
  "probs",
  "weights",
  "weights.t",
  "weights.grad",
  "probs.grad",
  "masked.grad",
  "scores.grad",
  "scores.grad.t",
];

describe("attention backward fusion", () => {
  it("puts attention, attention-lse and one attention-grad per gradient in place of the chain and its backward", () => {
    const plan = lower(trainingChain(), { executors: fused });
    const step = (n: string) => plan.steps.find((s) => s.node === n)!;
    expect(plan.steps.map((s) => `${s.node}:${s.kind}`)).toEqual([
      "context:attention",
      "context.lse:attention-lse",
      "v.grad:attention-grad",
      "q.grad:attention-grad",
      "k.grad:attention-grad",
    ]);
    const attrs = {
      causal: true,
      window: null,
      alignment: "top-left",
      scale: 0.5,
      dropoutRate: 0.1,
      dropoutSeed: 5,
      training: true,
    };
    expect(step("context").attrs).toEqual(attrs);
    expect(step("context.lse")).toMatchObject({
      inputs: ["q", "k", "pad"],
      attrs: { causal: true, window: null, alignment: "top-left", scale: 0.5 },
      shape: ["B", 4, "T"],
    });
    for (const wrt of ["q", "k", "v"]) {
      expect(step(`${wrt}.grad`)).toMatchObject({
        attrs: { ...attrs, wrt },
        inputs: ["q", "k", "v", "context", "context.grad", "context.lse", "pad"],
      });
    }
    expect(step("k.grad").shape).toEqual(["B", 2, "T", 4]);
    expect(step("k.grad").fused).toEqual(["scores.grad.t", "k.heads", "k.groups", "k.sum", "k.grad"]);
    // No [L, S] value is left in the plan.
    for (const n of LS)
      expect(
        plan.steps.some((s) => s.node === n),
        n,
      ).toBe(false);
    expect(explain(plan)).toContain(
      "pass attention backward fusion: fused context: forward → attention + context.lse; q.grad → attention-grad (q), k.grad → attention-grad (k), v.grad → attention-grad (v)",
    );
  });

  it("fuses without mask and dropout, with ungrouped heads, and with only some gradients asked for", () => {
    const plain = lower(trainingChain({ heads: 2, kvHeads: 2, mask: false, dropout: false }), { executors: fused });
    expect(plain.steps.map((s) => s.kind)).toEqual([
      "attention",
      "attention-lse",
      "attention-grad",
      "attention-grad",
      "attention-grad",
    ]);
    expect(plain.steps.find((s) => s.node === "context.lse")!.inputs).toEqual(["q", "k", undefined]);
    const onlyV = lower(trainingChain({ needs: ["v"] }), { executors: fused });
    expect(onlyV.steps.map((s) => `${s.node}:${s.kind}`)).toEqual([
      "context:attention",
      "context.lse:attention-lse",
      "v.grad:attention-grad",
    ]);
    const onlyK = lower(trainingChain({ needs: ["k"] }), { executors: fused });
    expect(onlyK.steps.map((s) => `${s.node}:${s.kind}`)).toEqual([
      "context:attention",
      "context.lse:attention-lse",
      "k.grad:attention-grad",
    ]);
    expect(onlyK.steps.find((s) => s.node === "k.grad")!.fused).toEqual([
      "scores.grad.t",
      "k.heads",
      "k.groups",
      "k.sum",
      "weights.grad",
      "probs.grad",
      "masked.grad",
      "scores.grad",
      "k.grad",
    ]);
  });

  it("a tap on any [L, S] value, forward or backward, keeps the whole chain unfused and says why", () => {
    for (const tapped of ["weights", "scores.grad", "weights.t"]) {
      const plan = lower(trainingChain(), { executors: fused, watched: [tapped] });
      expect(
        plan.steps.some((s) => s.kind === "attention-grad" || s.kind === "attention"),
        tapped,
      ).toBe(false);
      expect(plan.passes.find((p) => p.pass === "attention backward fusion")!.summary).toBe(
        `nothing fused; kept unfused: context (${tapped} is tapped)`,
      );
    }
    // A tap on a gradient the fused steps keep by name does not prevent the fusion.
    expect(
      lower(trainingChain(), { executors: fused, watched: ["k.grad", "context"] }).steps.filter(
        (s) => s.kind === "attention-grad",
      ),
    ).toHaveLength(3);
  });

  it("a patched [L, S] value, or a patched forward output (attention-grad reads it), keeps the chain and says so", () => {
    const summary = (patched: string) =>
      lower(trainingChain(), { executors: fused, patched: [patched] }).passes.find(
        (p) => p.pass === "attention backward fusion",
      )!.summary;
    expect(summary("weights")).toBe("nothing fused; kept unfused: context (weights is patched)");
    expect(summary("context")).toBe(
      "nothing fused; kept unfused: context (context is patched: the fused backward would read the override)",
    );
    // A patched gradient the fused steps keep by name does not prevent the fusion.
    expect(
      lower(trainingChain(), { executors: fused, patched: ["q.grad"] }).steps.filter(
        (s) => s.kind === "attention-grad",
      ),
    ).toHaveLength(3);
  });

  it("an [L, S] value that is an output, placed by the user, or read by anything else keeps the chain", () => {
    const extra = trainingChain({ extraReader: "masked.grad" });
    const summary = (plan: ReturnType<typeof lower>) =>
      plan.passes.find((p) => p.pass === "attention backward fusion")!.summary;
    expect(summary(lower(extra, { executors: fused }))).toBe(
      "nothing fused; kept unfused: context (masked.grad is read by reader (op softmax), not only by the chain and its backward)",
    );
    expect(summary(lower(trainingChain(), { executors: fused, placement: { "probs.grad": "cpu" } }))).toBe(
      "nothing fused; kept unfused: context (probs.grad is placed by the user)",
    );
    expect(summary(lower(trainingChain(), { executors: fused, keep: ["scores.grad"] }))).toBe(
      "nothing fused; kept unfused: context (scores.grad is an output)",
    );
  });

  it("needs an executor with every kernel, and does nothing with fusion off", () => {
    const noGrad = lower(trainingChain(), {
      executors: [fakeExecutor("cpu", "fused", { "attention-grad": "no kernel" })],
    });
    expect(noGrad.steps.some((s) => s.kind === "attention-grad" || s.kind === "attention")).toBe(false);
    expect(noGrad.passes.find((p) => p.pass === "attention backward fusion")!.summary).toBe(
      "nothing fused; kept unfused: context (no executor has an attention-grad kernel)",
    );
    // The forward fusion then says why it cannot fuse the forward alone.
    expect(noGrad.passes.find((p) => p.pass === "fusion")!.summary).toContain("kept unfused: context (");
    const off = lower(trainingChain(), { executors: fused, fusion: false });
    expect(off.steps.some((s) => s.kind === "attention-grad")).toBe(false);
    expect(off.passes.some((p) => p.pass === "attention backward fusion")).toBe(false);
  });

  it("leaves an inference graph's report as it was (no backward: nothing to say)", () => {
    const b = new GraphBuilder();
    const q = b.input("q", ["B", 2, "T", 4]);
    const w = b.add("softmax", "w", { x: b.add("score", "s", { q, k: q }) }, { scale: 1 });
    b.output(b.add("weighted-sum", "c", { weights: w, v: q }));
    const plan = lower(b.build(), { executors: fused });
    expect(plan.passes.map((p) => p.pass)).toEqual(["dead nodes", "fusion", "placement", "views"]);
    expect(plan.steps.find((s) => s.node === "c")!.kind).toBe("attention");
  });
});
