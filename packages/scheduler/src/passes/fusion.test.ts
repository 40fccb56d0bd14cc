import { buildAttention } from "@attngraph/attention";
import { describe, expect, it } from "vitest";
import { explain } from "../explain.js";
import { lower } from "../lower.js";
import { fakeExecutor } from "../test-executors.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true, window: 3, dropout: 0.1 };
const graph = buildAttention(config, { keyPaddingMask: true, training: true, seed: 9 });

describe("fusion pass", () => {
  it("fuses score → mask → softmax → dropout → weighted-sum into one attention step named after the weighted-sum", () => {
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "fused")] });
    const fused = plan.steps.find((s) => s.kind === "attention")!;
    expect(fused.node).toBe("context.heads");
    expect(fused.fused).toEqual(["scores", "masked", "probs", "weights", "context.heads"]);
    expect(fused.inputs).toEqual(["q.heads", "k.heads", "v.heads", "keyPaddingMask"]);
    expect(fused.attrs).toEqual({
      causal: true,
      window: 3,
      alignment: "top-left",
      scale: 0.5,
      dropoutRate: 0.1,
      dropoutSeed: 9,
      training: true,
    });
    for (const n of ["scores", "masked", "probs", "weights"]) expect(plan.steps.some((s) => s.node === n)).toBe(false);
    expect(explain(plan)).toContain("pass fusion: fused scores + masked + probs + weights + context.heads → attention");
  });

  it("a tap on the middle keeps the chain unfused, and says why", () => {
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "fused")], watched: ["weights"] });
    expect(plan.steps.some((s) => s.kind === "attention")).toBe(false);
    expect(plan.steps.map((s) => s.node)).toContain("weights");
    expect(plan.passes.find((p) => p.pass === "fusion")!.summary).toBe(
      "nothing fused; kept unfused: context.heads (weights is tapped)",
    );
  });

  it("a tap on the fused step's own output does not prevent fusion", () => {
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "fused")], watched: ["context.heads", "queries"] });
    expect(plan.steps.find((s) => s.node === "context.heads")!.kind).toBe("attention");
  });

  it("stays unfused where no executor has an attention kernel (each executor falls back to the chain)", () => {
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "all")] });
    expect(plan.steps.some((s) => s.kind === "attention")).toBe(false);
    expect(plan.passes.find((p) => p.pass === "fusion")!.summary).toContain("no executor has an attention kernel");
  });

  it("places the fused step on an executor that has the kernel, even behind a preferred one without it", () => {
    const plan = lower(graph, { executors: [fakeExecutor("gpu", "all"), fakeExecutor("cpu", "fused")] });
    const fused = plan.steps.find((s) => s.kind === "attention")!;
    expect(fused.placement).toEqual({ executor: "cpu", how: "fallback", skipped: ["gpu: no kernel for op attention"] });
  });

  it("leaves a chain alone when one of its nodes is pinned by the user, or when fusion is off", () => {
    expect(
      lower(graph, { executors: [fakeExecutor("cpu", "fused")], placement: { masked: "cpu" } }).steps.some(
        (s) => s.kind === "attention",
      ),
    ).toBe(false);
    expect(
      lower(graph, { executors: [fakeExecutor("cpu", "fused")], fusion: false }).passes.find(
        (p) => p.pass === "fusion",
      )!.summary,
    ).toBe("off (fusion: false)");
  });

  it("fuses a chain without mask and dropout", () => {
    const plain = buildAttention({ dIn: 4, dOut: 4, numHeads: 1 });
    const fused = lower(plain, { executors: [fakeExecutor("cpu", "fused")] }).steps.find(
      (s) => s.kind === "attention",
    )!;
    expect(fused.fused).toEqual(["scores", "weights", "context.heads"]);
    expect(fused.inputs).toEqual(["q.heads", "k.heads", "v.heads", undefined]);
    expect(fused.attrs).toMatchObject({ causal: false, window: null, dropoutRate: 0, training: false });
  });
});

describe("fusion pass with a node inside the chain", () => {
  it("fuses ALiBi, a user 0/1 mask and an additive bias as modifications of the fused step", () => {
    const alibi = buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { position: { kind: "alibi" } });
    const step = lower(alibi, { executors: [fakeExecutor("cpu", "fused")] }).steps.find((s) => s.kind === "attention")!;
    expect(step.fused).toEqual(["scores", "scores.alibi", "masked", "weights", "context.heads"]);
    // The paper's slopes for 2 heads (1/16, 1/256) per head, the score scale 1/√4 moved from the alibi node.
    expect(step.attrs).toMatchObject({ causal: true, scale: 0.5, maskMod: null, inputs: [] });
    expect(step.attrs.scoreMod).toEqual({
      op: "add",
      args: [
        "score",
        {
          op: "mul",
          args: [
            { op: "where", args: [{ op: "lt", args: ["h", 1] }, 1 / 16, 1 / 256] },
            { op: "sub", args: ["kv", "q"] },
          ],
        },
      ],
    });
    for (const userMask of ["mask", "bias"] as const) {
      const graph = buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { userMask });
      const plan = lower(graph, { executors: [fakeExecutor("cpu", "fused")] });
      const fused = plan.steps.find((s) => s.kind === "attention")!;
      expect(fused.inputs.slice(4)).toEqual([userMask]);
      if (userMask === "mask")
        expect(fused.attrs).toMatchObject({
          scale: 0.5,
          scoreMod: null,
          maskMod: { op: "ne", args: [{ op: "input", name: "mask", index: ["q", "kv"] }, 0] },
          inputs: ["mask"],
        });
      else
        expect(fused.attrs).toMatchObject({
          scale: 1,
          scoreMod: {
            op: "add",
            args: [
              { op: "mul", args: ["score", 0.5] },
              { op: "input", name: "bias", index: ["q", "kv"] },
            ],
          },
          maskMod: null,
          inputs: ["bias"],
        });
      expect(explain(plan)).toContain(
        `→ attention [${userMask === "mask" ? "mask-mod: mask[q, kv] != 0" : "score-mod: (score · 0.5) + bias[q, kv]"}]`,
      );
    }
  });
});
