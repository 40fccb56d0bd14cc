// The golden-train cases forward: every kind runs through the nn builders and state_dict loading and compares what a
// forward pass produces; gradients and training results are named on the line as not checked, never passed silently.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatResult, runConformance } from "./runner.js";
import { runTrainCase } from "./run-train-case.js";

const load = (file: string) => loadAnyCase(join(goldenTrainDir, file)).case as TrainCase;
const cpu = () => [createCpuExecutor()];

describe("golden-train cases, forward", () => {
  it.each(["expected", "all", "none"] as const)("every case passes on cpu (--tap %s), and each line names what it did not check", async (tap) => {
    const lines: string[] = [];
    const s = await runConformance(goldenTrainDir, { executors: cpu, tap, onResult: (r) => lines.push(formatResult(r)) });
    expect(s.failed, lines.join("\n")).toBe(0);
    expect(s.passed).toBe(4);
    for (const line of lines) expect(line).toMatch(/not checked \(attngraph has no gradients or training yet\): .*expectedGrad \(\d+ gradients: /);
    const train = lines.find((l) => l.includes("copy-task"))!;
    expect(train).toMatch(/losses, finalLogits, finalWeights/);
  });

  it("a block case compares all nine intermediates when tapped, only the output untapped", async () => {
    const c = load("block-causal-b2-t10-e16-h4.json");
    const tapped = await runTrainCase(c, { executors: cpu(), tap: "expected" });
    expect(tapped.checks.map((k) => k.name).sort()).toEqual(["attention", "ln1", "ln2", "mlp", "mlp.gelu", "mlp.hidden", "output", "residual", "weights"]);
    const none = await runTrainCase(c, { executors: cpu(), tap: "none" });
    expect(none.checks.map((k) => k.name)).toEqual(["output"]);
    expect(none.notCompared).toHaveLength(8);
  });

  it("a wrong expected intermediate fails the case (numbers were compared)", async () => {
    const c = load("block-causal-b2-t10-e16-h4.json");
    const ln2 = c.expected["ln2"]!;
    const data = ln2.toArray();
    data[5] = data[5]! + 0.01;
    const r = await runTrainCase({ ...c, expected: { ...c.expected, ln2: Tensor.from(data, ln2.shape) } }, { executors: cpu() });
    expect(r.ok).toBe(false);
    expect(formatResult(r)).toMatch(/^FAIL .* ln2: 1 of 320 off/);
  });

  it("a train case with only training results to compare fails: nothing forward was compared", async () => {
    const c = load("seed-003-copy-task-v10-e32-h4-t8.json");
    const { logits: _logits, ...rest } = c.expected;
    const r = await runTrainCase({ ...c, expected: rest }, { executors: cpu() });
    expect(r.ok).toBe(false);
    expect(r.error).toBe("nothing to compare: expected holds no tensors");
    expect(r.notChecked).toContain("losses");
  });

  it("a state_dict key missing from params is a failed case naming it", async () => {
    const c = load("mha-backward-causal-b2-t4-e8-h2.json");
    const { ["out_proj.weight"]: _w, ...params } = c.params;
    const r = await runTrainCase({ ...c, params }, { executors: cpu() });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/missing out_proj\.weight/);
  });
});
