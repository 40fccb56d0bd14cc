// The attention fusions with score and mask modifications: the chain score → score-mod → mask-mod [mask] → softmax →
// weighted-sum becomes the fused step (the backward's fusion is tested on grad()'s real output in @attngraph/reliability), the expressions and their gathered
// inputs carried as attributes and slots; what no fused kernel covers stays unfused and explain() says why.
import { flexAttention } from "@attngraph/attention";
import { GraphBuilder } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { explain } from "../explain.js";
import { lower } from "../lower.js";
import { fakeExecutor } from "../test-executors.js";

const read = (name: string, ...index: unknown[]) => ({ op: "input", name, index });
const alibi = {
  op: "add",
  args: ["score", { op: "mul", args: [read("slopes", "h"), { op: "sub", args: ["kv", "q"] }] }],
};
const causal = { op: "ge", args: ["q", "kv"] };
const fused = [fakeExecutor("cpu", "fused")];

describe("attention fusion with modifications", () => {
  it("fuses score → score-mod → mask-mod → softmax → weighted-sum, the expressions and gathered slots in the step", () => {
    const graph = flexAttention({
      numHeads: 2,
      headDim: 4,
      scoreMod: alibi,
      maskMod: causal,
      gathered: { slopes: [2] },
    });
    const plan = lower(graph, { executors: fused });
    expect(plan.steps.map((s) => s.kind)).toEqual(["attention"]);
    const step = plan.steps[0]!;
    expect(step.fused).toEqual(["scores", "scores.mod", "masked", "weights", "output"]);
    expect(step.inputs).toEqual(["q", "k", "v", undefined, "slopes"]);
    expect(step.attrs).toMatchObject({ scale: 0.5, scoreMod: alibi, maskMod: causal, inputs: ["slopes"] });
    expect(explain(plan)).toContain("→ attention [score-mod: score + (slopes[h] · (kv − q)); mask-mod: q ≥ kv]");
  });

  it("one slot for a tensor both expressions read; a name both use for different tensors is renamed in the mask", () => {
    const b = new GraphBuilder();
    const [q, k, v] = ["q", "k", "v"].map((n) => b.input(n, [1, 2, "T", 4]));
    const [x, y] = [b.input("x", [2]), b.input("y", [2])];
    const scores = b.add("score", "scores", { q, k });
    const mod = b.add(
      "score-mod",
      "mod",
      { x: scores, g0: x },
      { scale: 1, expr: { op: "add", args: ["score", read("t", "h")] }, inputs: ["t"] },
    );
    const masked = b.add(
      "mask-mod",
      "masked",
      { x: mod, g0: y, g1: x },
      { expr: { op: "gt", args: [read("t", "h"), read("u", "h")] }, inputs: ["t", "u"] },
    );
    const w = b.add("softmax", "w", { x: masked }, { scale: 1 });
    const graph = b.output(b.add("weighted-sum", "out", { weights: w, v })).build();
    const step = lower(graph, { executors: fused }).steps.find((s) => s.kind === "attention")!;
    expect(step.inputs.slice(4)).toEqual(["x", "y"]);
    expect(step.attrs.inputs).toEqual(["t", "t_1"]);
    expect(step.attrs.maskMod).toEqual({ op: "gt", args: [read("t_1", "h"), read("t", "h")] });
  });

  it("keeps the chain where a gathered input is the scores or a score-mod follows a mask; folds a softmax scale after a modification", () => {
    const build = (kind: "self" | "scaled" | "order") => {
      const b = new GraphBuilder();
      const [q, k, v] = ["q", "k", "v"].map((n) => b.input(n, [1, 2, "T", 4]));
      const scores = b.add("score", "scores", { q, k });
      let x = scores;
      if (kind === "order") x = b.add("mask", "m", { scores }, { causal: true });
      const mod = b.add(
        "score-mod",
        "mod",
        kind === "self" ? { x, g0: scores } : { x },
        kind === "self"
          ? { scale: 1, expr: read("s", "b", "h", "q", "kv"), inputs: ["s"] }
          : { scale: 1, expr: { op: "tanh", args: ["score"] } },
      );
      const w = b.add("softmax", "w", { x: mod }, { scale: kind === "scaled" ? 2 : 1 });
      return b.output(b.add("weighted-sum", "out", { weights: w, v })).build();
    };
    const summary = (kind: "self" | "scaled" | "order") =>
      lower(build(kind), { executors: fused }).passes.find((p) => p.pass === "fusion")!.summary;
    expect(summary("self")).toBe(
      "nothing fused; kept unfused: out (mod gathers from scores, a value inside the attention chain: a fused kernel never holds it)",
    );
    // A softmax scale after a score modification multiplies the expression instead.
    expect(summary("scaled")).toBe("fused scores + mod + w + out → attention [score-mod: tanh(score) · 2]");
    expect(summary("order")).toBe(
      "nothing fused; kept unfused: out (mod reads m (op mask): the fused kernels take one score modification, then the masks)",
    );
  });
});
