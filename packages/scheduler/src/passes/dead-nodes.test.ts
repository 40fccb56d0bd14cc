import { buildAttention } from "@attngraph/attention";
import { GraphBuilder } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { lower } from "../lower.js";
import { fakeExecutor } from "../test-executors.js";

function graphWithBranch() {
  const b = new GraphBuilder();
  const x = b.input("x", ["B", "T", 4]);
  const y = b.add("projection", "used", { x, weight: b.weight("W", [4, 4]) });
  const dead = b.add("projection", "unused", { x, weight: b.weight("W2", [4, 4]) });
  b.add("transpose", "unused.t", { x: dead }, { perm: [0, 2, 1] });
  return b.output(y).build();
}

describe("dead-node elimination", () => {
  it("drops nodes that reach no output and no tap, with the chains feeding them", () => {
    const plan = lower(graphWithBranch(), { executors: [fakeExecutor("cpu", "all")] });
    expect(plan.steps.map((s) => s.node)).toEqual(["used"]);
    expect(plan.passes.find((p) => p.pass === "dead nodes")!.summary).toBe(
      "removed unused, unused.t (consumed by no output or tap)",
    );
  });

  it("keeps a dead branch that a tap watches", () => {
    const plan = lower(graphWithBranch(), { executors: [fakeExecutor("cpu", "all")], watched: ["unused.t"] });
    expect(plan.steps.map((s) => s.node)).toEqual(["used", "unused", "unused.t"]);
  });

  it("removes nothing from a standard attention graph", () => {
    const plan = lower(buildAttention({ dIn: 8, dOut: 8, numHeads: 2 }), { executors: [fakeExecutor("cpu", "all")] });
    expect(plan.passes.find((p) => p.pass === "dead nodes")!.summary).toBe("none removed");
  });
});
