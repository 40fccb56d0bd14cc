// The diff's rows, classes and lines, on DiffResults made by hand: every status, the summary's counts, the first
// disagreement in words, and the checks on what the user picked.
import type { DiffResult, NodeComparison, NodeDiff } from "@attngraph/tools";
import { describe, expect, it } from "vitest";
import {
  checkPair,
  diffRows,
  diffSummary,
  firstLine,
  graphKey,
  nodeStatuses,
  reproFileName,
  statusClass,
} from "./diff-model.js";
import { defaultConfig } from "./playground-config.js";

const compared = (status: NodeComparison["status"], maxAbs = NaN, ranOn = "wasm", reason?: string): NodeComparison => ({
  executor: "wasm",
  ranOn,
  status,
  maxAbs,
  maxRel: Number.isNaN(maxAbs) ? NaN : maxAbs * 10,
  failures: status === "disagree" ? 1 : 0,
  size: 4,
  ...(reason ? { reason } : {}),
});
const node = (name: string, kind: string, c: NodeComparison): NodeDiff => ({
  node: name,
  kind,
  shape: [2, 2],
  against: [c],
});

const result = (nodes: NodeDiff[], first?: DiffResult["first"]): DiffResult => ({
  reference: "cpu",
  executors: ["cpu", "wasm"],
  tolerance: { abs: 1e-4, rel: 1e-4 },
  nodes,
  ...(first ? { first } : {}),
  ok: !first,
});

const agreeing = result([
  node("queries", "projection", compared("agree", 1.2e-7)),
  node("weights", "softmax", compared("agree", 0)),
]);
const mixed = result(
  [
    node("queries", "projection", compared("agree", 1.2e-7)),
    node("scores", "score", compared("unsupported", NaN, "cpu", "unsupported on wasm: no kernel")),
    node("weights", "softmax", compared("disagree", 0.5)),
    node("output", "out-proj", compared("not-run", NaN, "wasm", "run failed")),
  ],
  { node: "weights", kind: "softmax", executor: "wasm", alone: "disagrees" },
);

describe("diff model", () => {
  it("makes one row per node with its status, errors and executor", () => {
    expect(diffRows(mixed)).toEqual([
      {
        node: "queries",
        kind: "projection",
        status: "agree",
        maxAbs: "1.2e-7",
        maxRel: "0.0000012",
        ranOn: "wasm",
        reason: undefined,
      },
      {
        node: "scores",
        kind: "score",
        status: "unsupported",
        maxAbs: "—",
        maxRel: "—",
        ranOn: "cpu",
        reason: "unsupported on wasm: no kernel",
      },
      {
        node: "weights",
        kind: "softmax",
        status: "disagree",
        maxAbs: "0.5",
        maxRel: "5",
        ranOn: "wasm",
        reason: undefined,
      },
      {
        node: "output",
        kind: "out-proj",
        status: "not-run",
        maxAbs: "—",
        maxRel: "—",
        ranOn: "wasm",
        reason: "run failed",
      },
    ]);
    expect([...nodeStatuses(mixed)]).toEqual([
      ["queries", "agree"],
      ["scores", "unsupported"],
      ["weights", "disagree"],
      ["output", "not-run"],
    ]);
    expect(["agree", "disagree", "unsupported"].map((s) => statusClass(s as "agree"))).toEqual([
      "diff-agree",
      "diff-disagree",
      "diff-unsupported",
    ]);
  });

  it("refuses a result with other than one comparison per node", () => {
    const three = { ...agreeing, nodes: [{ ...agreeing.nodes[0]!, against: [] }] };
    expect(() => diffRows(three)).toThrow("diff of node queries: expected one comparison (two executors), got 0");
  });

  it("sums the statuses up", () => {
    expect(diffSummary(agreeing)).toBe("wasm against cpu: 2 of 2 nodes agree within abs 0.0001, rel 0.0001");
    expect(diffSummary(mixed)).toBe(
      "wasm against cpu: 1 of 4 nodes agree within abs 0.0001, rel 0.0001; 1 disagree, 1 not run (the run failed before them), 1 unsupported (ran on cpu, not compared)",
    );
  });

  it("names the first disagreement and whether the node alone still disagrees", () => {
    expect(firstLine(agreeing)).toBe("no node disagrees: there is nothing to reproduce");
    expect(firstLine(mixed)).toBe(
      "first disagreement: node weights (softmax) on wasm; run alone on cpu's values of its inputs, it still disagrees: the kernel itself differs",
    );
    const upstream = { ...mixed, first: { ...mixed.first!, alone: "agrees" as const } };
    expect(firstLine(upstream)).toContain("it agrees: the difference built up upstream");
    const failed = result([node("weights", "softmax", compared("failed", NaN, "wasm", "boom"))], {
      node: "weights",
      kind: "softmax",
      executor: "wasm",
      alone: "disagrees",
    });
    expect(firstLine(failed)).toMatch(/^first failure: node weights/);
    expect(reproFileName({ node: "blocks.0/attn weights", kind: "softmax", executor: "wasm", alone: "agrees" })).toBe(
      "repro-blocks.0_attn_weights-wasm.json",
    );
  });

  it("refuses the same executor on both sides", () => {
    expect(() => checkPair("cpu", "wasm")).not.toThrow();
    expect(() => checkPair("cpu", "cpu")).toThrow(
      "pick two different executors: both sides are cpu, and the diff compares one executor with another",
    );
  });

  it("keys a diff by the graph and the numbers, not by the executor, the tapped node or the ablation", () => {
    const key = graphKey(defaultConfig, undefined);
    expect(graphKey({ ...defaultConfig, executor: "wasm", selected: "scores" }, undefined)).toBe(key);
    expect(graphKey({ ...defaultConfig, seed: 2 }, undefined)).not.toBe(key);
    expect(
      graphKey({ ...defaultConfig, attention: { ...defaultConfig.attention, causal: false } }, undefined),
    ).not.toBe(key);
    expect(graphKey(defaultConfig, "seed-002")).not.toBe(key);
  });
});
