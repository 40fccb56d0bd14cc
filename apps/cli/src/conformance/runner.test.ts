// A case's line says what was compared and what was not: a tensor the tap mode cannot see is named on the line.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { FileError } from "../files.js";
import { goldenDir, goldenFlexDir, goldenModelsDir } from "@attngraph/testkit";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CaseResult, TensorCheck } from "./run-case.js";
import { formatResult, runConformance } from "./runner.js";

const check = (name: string, error: number): TensorCheck => ({
  name,
  ok: true,
  failures: 0,
  size: 4,
  worst: { index: 1, got: 0.5, expected: 0.5, error },
});

describe("formatResult", () => {
  it("names the tensors --tap none did not compare on a passing line", () => {
    const r: CaseResult = {
      file: "a.json",
      name: "a",
      ok: true,
      checks: [check("output", 1e-7)],
      notCompared: ["scores", "weights"],
    };
    expect(formatResult(r)).toBe(
      "PASS a  (1 tensors, worst: output 1.00e-7; not compared under --tap none: scores, weights)",
    );
  });

  it("a case that compared nothing is a FAIL line giving the reason", () => {
    const r: CaseResult = {
      file: "a.json",
      name: "a",
      ok: false,
      checks: [],
      error: "nothing to compare: not compared under --tap none: weights",
      notCompared: ["weights"],
    };
    expect(formatResult(r)).toBe("FAIL a  nothing to compare: not compared under --tap none: weights");
  });

  it("a failing line keeps the note after the mismatches", () => {
    const bad: TensorCheck = {
      ...check("output", 0.1),
      ok: false,
      failures: 1,
      worst: { index: 2, got: 1, expected: 0.9, error: 0.1 },
    };
    const r: CaseResult = { file: "a.json", name: "a", ok: false, checks: [bad], notCompared: ["weights"] };
    expect(formatResult(r)).toBe(
      "FAIL a  output: 1 of 4 off, worst at 2: got 1, expected 0.9 (|diff| 1.00e-1); not compared under --tap none: weights",
    );
  });
});

describe("runConformance", () => {
  const executors = () => [createCpuExecutor()];

  it("a graph document or a repro among the cases fails, saying what it is (not `$.name: missing field`)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-runner-"));
    copyFileSync(join(goldenDir, "t1-causal-b2-d8-h2.json"), join(dir, "a.json"));
    writeFileSync(join(dir, "b-graph.json"), JSON.stringify({ format: "attngraph.graph", version: 1 }));
    writeFileSync(join(dir, "c-repro.json"), JSON.stringify({ format: "attngraph.repro", version: 1 }));
    const s = await runConformance(dir, { executors });
    expect(s.results.map((r) => [r.ok, r.error])).toEqual([
      [true, undefined],
      [
        false,
        `conformance: ${join(dir, "b-graph.json")} is a graph document, expected a golden case; a graph document goes to attngraph diff (with --dims) or attngraph export`,
      ],
      [
        false,
        `conformance: ${join(dir, "c-repro.json")} is a repro, expected a golden case; a repro goes to attngraph run or attngraph diff`,
      ],
    ]);
  });

  it("a folder it cannot list is a FileError naming it", async () => {
    const file = join(goldenDir, "t1-causal-b2-d8-h2.json");
    await expect(runConformance(file, { executors })).rejects.toThrow(FileError);
    await expect(runConformance(file, { executors })).rejects.toThrow(
      /t1-causal-b2-d8-h2\.json: cannot list the folder, expected a readable folder, got it is not a folder \(ENOTDIR\)$/,
    );
  });

  it("golden-flex: every case passes on cpu with its gradients compared (q, k, v and a learnable bias table)", async () => {
    const s = await runConformance(goldenFlexDir, { executors });
    expect(s.failed, s.results.map(formatResult).join("\n")).toBe(0);
    expect(s.passed).toBeGreaterThanOrEqual(6);
    const learnable = s.results.find((r) => r.name === "flex-relbias-learnable-b1-h2-t8-d8")!;
    expect(learnable.checks.map((c) => c.name).sort()).toEqual([
      "bias.grad",
      "k.grad",
      "output",
      "q.grad",
      "v.grad",
      "weights",
    ]);
    // A case whose gradient goes wrong fails: a planted error in the bias table's expected gradient.
    const dir = mkdtempSync(join(tmpdir(), "attngraph-flex-"));
    const json = JSON.parse(readFileSync(join(goldenFlexDir, "flex-relbias-learnable-b1-h2-t8-d8.json"), "utf8"));
    json.expectedGrad.bias.data[3] += 0.01;
    writeFileSync(join(dir, "planted.json"), JSON.stringify(json));
    const planted = await runConformance(dir, { executors });
    expect(formatResult(planted.results[0]!)).toMatch(
      /^FAIL flex-relbias-learnable-b1-h2-t8-d8 {2}bias\.grad: 1 of 30 off, worst at 3/,
    );
  });
});

describe("golden-models", () => {
  const executors = () => [createCpuExecutor()];
  const planted = (name: string, edit: (json: Record<string, any>) => void) => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-models-"));
    const json = JSON.parse(readFileSync(join(goldenModelsDir, `${name}.json`), "utf8"));
    edit(json);
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(json));
    copyFileSync(join(goldenModelsDir, json.weights), join(dir, json.weights));
    return dir;
  };

  it("every public case passes on cpu: logits, loss, greedy tokens and nanoGPT's training losses compared", async () => {
    const s = await runConformance(goldenModelsDir, { executors });
    expect(s.failed, s.results.map(formatResult).join("\n")).toBe(0);
    const nano = s.results.find((r) => r.name === "nanogpt-bias-l2")!;
    expect(nano.checks.map((c) => c.name)).toEqual([
      "logits",
      "loss",
      "greedy tokens",
      "training losses (5 AdamW steps, clipped)",
    ]);
    expect(s.results.find((r) => r.name === "torch-encoder-layer-normfirst-gelu")!.checks.map((c) => c.name)).toEqual([
      "output",
    ]);
  });

  it("a case whose numbers are wrong fails, naming what: a training loss, a greedy token, the output", async () => {
    const loss = await runConformance(
      planted("nanogpt-bias-l2", (j) => (j.train.losses[3] += 1e-3)),
      { executors },
    );
    expect(formatResult(loss.results[0]!)).toMatch(
      /^FAIL nanogpt-bias-l2 {2}training losses \(5 AdamW steps, clipped\): 1 of 5 off, worst at 3/,
    );
    const token = await runConformance(
      planted("gpt2-hf-layout-l1", (j) => (j.generate.greedy.data[5] = 7)),
      { executors },
    );
    expect(formatResult(token.results[0]!)).toMatch(
      /^FAIL gpt2-hf-layout-l1 {2}greedy tokens: 1 of 9 off, worst at 5: got 13, expected 7/,
    );
    const output = await runConformance(
      planted("torch-encoder-layer-normfirst-gelu", (j) => (j.expected.output.data[0] += 0.01)),
      { executors },
    );
    expect(formatResult(output.results[0]!)).toMatch(
      /^FAIL torch-encoder-layer-normfirst-gelu {2}output: 1 of 448 off, worst at 0/,
    );
  });

  it("a checkpoint that does not fit fails the case with every bad key named", async () => {
    const dir = planted("nanogpt-bias-l2", (j) => (j.config.n_layer = 3));
    const s = await runConformance(dir, { executors });
    expect(formatResult(s.results[0]!)).toMatch(
      /^FAIL nanogpt-bias-l2 {2}config\.n_layer: disagrees with the checkpoint/,
    );
  });
});
