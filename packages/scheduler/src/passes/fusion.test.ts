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
    expect(fused.attrs).toEqual({ causal: true, window: 3, alignment: "top-left", scale: 0.5, dropoutRate: 0.1, dropoutSeed: 9, training: true });
    for (const n of ["scores", "masked", "probs", "weights"]) expect(plan.steps.some((s) => s.node === n)).toBe(false);
    expect(explain(plan)).toContain("pass fusion: fused scores + masked + probs + weights + context.heads → attention");
  });

  it("a tap on the middle keeps the chain unfused, and says why", () => {
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "fused")], watched: ["weights"] });
    expect(plan.steps.some((s) => s.kind === "attention")).toBe(false);
    expect(plan.steps.map((s) => s.node)).toContain("weights");
    expect(plan.passes.find((p) => p.pass === "fusion")!.summary).toBe("nothing fused; kept unfused: context.heads (weights is tapped)");
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
    expect(lower(graph, { executors: [fakeExecutor("cpu", "fused")], placement: { masked: "cpu" } }).steps.some((s) => s.kind === "attention")).toBe(false);
    expect(lower(graph, { executors: [fakeExecutor("cpu", "fused")], fusion: false }).passes.find((p) => p.pass === "fusion")!.summary).toBe("off (fusion: false)");
  });

  it("fuses a chain without mask and dropout", () => {
    const plain = buildAttention({ dIn: 4, dOut: 4, numHeads: 1 });
    const fused = lower(plain, { executors: [fakeExecutor("cpu", "fused")] }).steps.find((s) => s.kind === "attention")!;
    expect(fused.fused).toEqual(["scores", "weights", "context.heads"]);
    expect(fused.inputs).toEqual(["q.heads", "k.heads", "v.heads", undefined]);
    expect(fused.attrs).toMatchObject({ causal: false, window: null, dropoutRate: 0, training: false });
  });
});

describe("fusion pass with a node inside the chain", () => {
  it("keeps an ALiBi chain unfused and says which node interrupts it", () => {
    const alibi = buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { position: { kind: "alibi" } });
    const plan = lower(alibi, { executors: [fakeExecutor("cpu", "fused")] });
    expect(plan.steps.some((s) => s.kind === "attention")).toBe(false);
    expect(plan.passes.find((p) => p.pass === "fusion")!.summary).toBe(
      "nothing fused; kept unfused: context.heads (masked reads scores.alibi (op alibi), not a score: no fused kernel covers that)",
    );
  });
});
