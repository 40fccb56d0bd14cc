// runCase's promise: a case passes only when at least one expected tensor was compared and every compared one matched;
// an expected tensor the tap mode cannot see is named, never dropped silently.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { goldenDir, goldenGradDir, loadCase, type GoldenCase } from "@attngraph/testkit";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCase, type RunCaseOptions } from "./run-case.js";
import { formatResult } from "./runner.js";

const base = loadCase(join(goldenDir, "mha-causal-outproj-b2-t6-d8-h2.json"));
const run = (c: GoldenCase, tap: NonNullable<RunCaseOptions["tap"]>) =>
  runCase(c, { executors: [createCpuExecutor()], tap });

/** The case's `weights` with one element off by 0.25: far outside any tolerance. */
function wrongWeights(): Tensor {
  const w = base.expected.weights!;
  const data = w.toArray();
  data[0] = data[0]! + 0.25;
  return Tensor.from(data, w.shape);
}

describe("runCase compares something or fails", () => {
  it.each(["expected", "all", "none"] as const)("a case with expected {} fails (--tap %s)", async (tap) => {
    const r = await run({ ...base, expected: {} }, tap);
    expect(r.ok).toBe(false);
    expect(r.checks).toEqual([]);
    expect(r.error).toBe("nothing to compare: expected holds no tensors");
  });

  it("a wrong weights is caught when tapped", async () => {
    const r = await run({ ...base, expected: { weights: wrongWeights() } }, "expected");
    expect(r.ok).toBe(false);
    expect(r.checks.map((k) => [k.name, k.ok])).toEqual([["weights", false]]);
  });

  it("a case whose only expected tensor is a wrong weights fails under --tap none, naming it", async () => {
    const r = await run({ ...base, expected: { weights: wrongWeights() } }, "none");
    expect(r.ok).toBe(false);
    expect(r.error).toBe("nothing to compare: not compared under --tap none: weights");
    expect(r.notCompared).toEqual(["weights"]);
  });

  it("under --tap none the outputs are compared and every other expected tensor is listed", async () => {
    const r = await run(base, "none");
    expect(r.ok).toBe(true);
    expect(r.checks.map((k) => k.name)).toEqual(["output"]);
    expect(r.notCompared).toEqual(["queries", "keys", "values", "scores", "weights", "context"]);
  });

  it("tapped, nothing is left out", async () => {
    const r = await run(base, "expected");
    expect(r.ok).toBe(true);
    expect(r.checks).toHaveLength(7);
    expect(r.notCompared).toBeUndefined();
  });
});

describe("golden-grad cases: forward and gradients on one run", () => {
  it("every forward tensor and every expected gradient is compared", async () => {
    const c = loadCase(join(goldenGradDir, "cross-t5-kv7-b2-d8-h2-grad.json"));
    const r = await run(c, "expected");
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(r.checks.map((k) => k.name)).toEqual([
      ...Object.keys(c.expected),
      ...Object.keys(c.expectedGrad).map((n) => `grad ${n}`),
    ]);
    expect(r.notChecked).toBeUndefined();
  });

  it("with a fused QKV projection the stacked weight's gradient is compared against the stacked expected gradients", async () => {
    const c = loadCase(join(goldenGradDir, "qkv-bias-b2-t5-d12-h3-grad.json"));
    const r = await runCase(c, { executors: [createCpuExecutor()], fusedQkv: true, tap: "none" });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(r.checks.map((k) => k.name)).toEqual([
      "output",
      "grad x",
      "grad W_qkv",
      "grad b_qkv",
      "grad out_proj",
      "grad out_bias",
    ]);
  });

  it("an expected gradient the graph has no value for is named as not checked, never dropped", async () => {
    const c = loadCase(join(goldenGradDir, "scale0.3-b2-t5-d8-h2-grad.json"));
    const r = await run(
      { ...c, expectedGrad: { ...c.expectedGrad, b_query: Tensor.from(new Array(8).fill(0), [8]) } },
      "none",
    );
    expect(r.ok).toBe(true);
    expect(r.notChecked).toEqual(["expectedGrad.b_query (no value of this name in the graph)"]);
    const cross = loadCase(join(goldenGradDir, "cross-t5-kv7-b2-d8-h2-grad.json"));
    const fused = await runCase(cross, { executors: [createCpuExecutor()], fusedQkv: true, tap: "none" });
    expect([fused.ok, fused.notChecked]).toEqual([true, undefined]);
    expect(fused.checks.map((k) => k.name)).toContain("grad W_kv");
  });

  it("a wrong expected gradient fails the case, naming it", async () => {
    const c = loadCase(join(goldenGradDir, "scale0.3-b2-t5-d8-h2-grad.json"));
    const g = c.expectedGrad["W_key"]!;
    const data = g.toArray();
    data[3] = data[3]! + 0.01;
    const r = await run({ ...c, expectedGrad: { ...c.expectedGrad, W_key: Tensor.from(data, g.shape) } }, "none");
    expect(r.ok).toBe(false);
    expect(formatResult(r)).toMatch(/^FAIL .* grad W_key: 1 of 64 off/);
  });
});
