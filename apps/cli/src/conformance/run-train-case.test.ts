// The golden-train cases: every kind runs through the nn builders and state_dict loading and compares what a forward
// pass produces and every expected gradient (through grad()); training results are named on the line as not checked,
// never passed silently.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatResult, runConformance } from "./runner.js";
import { runTrainCase } from "./run-train-case.js";

const load = (file: string) => loadAnyCase(join(goldenTrainDir, file)).case as TrainCase;
const cpu = () => [createCpuExecutor()];

describe("golden-train cases, forward and gradients", () => {
  it.each(["expected", "all", "none"] as const)(
    "every case passes on cpu (--tap %s), and each line names what it did not check",
    async (tap) => {
      const lines: string[] = [];
      const s = await runConformance(goldenTrainDir, {
        executors: cpu,
        tap,
        onResult: (r) => lines.push(formatResult(r)),
      });
      expect(s.failed, lines.join("\n")).toBe(0);
      expect(s.passed).toBe(4);
      for (const line of lines) expect(line).not.toMatch(/not checked/);
    },
  );

  it("a block case compares all nine intermediates when tapped, only the output untapped, and every gradient both ways", async () => {
    const c = load("block-causal-b2-t10-e16-h4.json");
    const grads = Object.keys(c.expectedGrad).map((n) => `grad ${n}`);
    expect(grads).toHaveLength(11);
    const tapped = await runTrainCase(c, { executors: cpu(), tap: "expected" });
    expect(tapped.checks.map((k) => k.name).sort()).toEqual(
      ["attention", "ln1", "ln2", "mlp", "mlp.gelu", "mlp.hidden", "output", "residual", "weights", ...grads].sort(),
    );
    const none = await runTrainCase(c, { executors: cpu(), tap: "none" });
    expect(none.checks.map((k) => k.name)).toEqual(["output", ...grads]);
    expect(none.notCompared).toHaveLength(8);
  });

  it("a train case's step-0 gradients are those of its mean cross-entropy, compared for every parameter", async () => {
    const c = load("seed-003-copy-task-v10-e32-h4-t8.json");
    const r = await runTrainCase(c, { executors: cpu(), tap: "none" });
    expect(r.ok, formatResult(r)).toBe(true);
    expect(r.checks.map((k) => k.name)).toEqual([
      "logits",
      ...Object.keys(c.params).map((n) => `grad ${n}`),
      "losses",
      "finalLogits",
    ]);
  });

  it("a wrong expected gradient fails the case", async () => {
    const c = load("mha-backward-nomask-b1-t5-e12-h3.json");
    const g = c.expectedGrad["qkv_proj.weight"]!;
    const data = g.toArray();
    data[7] = data[7]! - 0.01;
    const r = await runTrainCase(
      { ...c, expectedGrad: { ...c.expectedGrad, "qkv_proj.weight": Tensor.from(data, g.shape) } },
      { executors: cpu() },
    );
    expect(r.ok).toBe(false);
    expect(formatResult(r)).toMatch(/^FAIL .* grad qkv_proj\.weight: 1 of 432 off/);
  });

  it("a wrong expected intermediate fails the case (numbers were compared)", async () => {
    const c = load("block-causal-b2-t10-e16-h4.json");
    const ln2 = c.expected["ln2"]!;
    const data = ln2.toArray();
    data[5] = data[5]! + 0.01;
    const r = await runTrainCase(
      { ...c, expected: { ...c.expected, ln2: Tensor.from(data, ln2.shape) } },
      { executors: cpu() },
    );
    expect(r.ok).toBe(false);
    expect(formatResult(r)).toMatch(/^FAIL .* ln2: 1 of 320 off/);
  });

  it("a train case's training results: every step's loss, the final logits and attention weights after 50 Adam steps", async () => {
    const c = load("seed-003-copy-task-v10-e32-h4-t8.json");
    const { logits: _logits, ...rest } = c.expected;
    const r = await runTrainCase({ ...c, expected: rest, expectedGrad: {} }, { executors: cpu() });
    expect(r.ok, formatResult(r)).toBe(true);
    expect(r.checks.map((k) => k.name)).toEqual(["losses", "finalLogits", "finalWeights"]);
    const none = await runTrainCase({ ...c, expected: rest, expectedGrad: {} }, { executors: cpu(), tap: "none" });
    expect([none.ok, none.checks.map((k) => k.name), none.notCompared]).toEqual([
      true,
      ["losses", "finalLogits"],
      ["finalWeights"],
    ]);
    // 1.2 s alone; 100 Adam steps of cold sessions took 24.6 s once with the 2 cores loaded by other work.
  }, 60_000);

  it("a wrong loss at one step fails the case, naming it", async () => {
    const c = load("seed-003-copy-task-v10-e32-h4-t8.json");
    const losses = c.expected["losses"]!.toArray();
    losses[20] = losses[20]! + 0.01;
    const r = await runTrainCase(
      { ...c, expected: { losses: Tensor.from(losses, [losses.length]) }, expectedGrad: {} },
      { executors: cpu() },
    );
    expect(r.ok).toBe(false);
    expect(formatResult(r)).toMatch(/^FAIL .* losses: 1 of 50 off, worst at 20/);
  });

  it("a state_dict key missing from params is a failed case naming it", async () => {
    const c = load("mha-backward-causal-b2-t4-e8-h2.json");
    const { ["out_proj.weight"]: _w, ...params } = c.params;
    const r = await runTrainCase({ ...c, params }, { executors: cpu() });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/missing out_proj\.weight/);
  });
});
