import { createOpRegistry, definePointwiseOp, GraphBuilder, siluOp } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { explain } from "../explain.js";
import { lower } from "../lower.js";
import { fakeExecutor } from "../test-executors.js";

describe("pointwise lowering", () => {
  it("an op declared by its expression becomes a pointwise step carrying it; placement asks for pointwise", () => {
    const twice = definePointwiseOp({
      kind: "twice",
      doc: "2x",
      inputs: [{ name: "x" }],
      expr: { op: "mul", args: [{ op: "input", name: "x", index: [] }, 2] },
    });
    const b = new GraphBuilder({ registry: createOpRegistry([twice]) });
    const x = b.input("x", [2, 3]);
    const act = b.add("silu", "act", { x });
    const graph = b.output(b.add("twice", "out", { x: act })).build();
    const plan = lower(graph, { executors: [fakeExecutor("cpu", ["pointwise"])] });
    expect(plan.steps.map((s) => [s.node, s.kind])).toEqual([
      ["act", "pointwise"],
      ["out", "pointwise"],
    ]);
    expect(plan.steps[0]!.attrs["expr"]).toBe(siluOp.pointwise!({})); // the same object every time: kernels cache by it
    expect(explain(plan)).toContain("pass pointwise: silu ×1, twice ×1 as pointwise steps");
    // An executor without the pointwise kernel cannot run silu: said at compile time, naming the node.
    expect(() => lower(graph, { executors: [fakeExecutor("bare", ["silu"])] })).toThrow(/act/);
  });
});
