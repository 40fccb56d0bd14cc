// Every golden case exported to ONNX and run in onnxruntime-node, in both contrib modes: each expected forward tensor
// (the graph's outputs and the named intermediates, exported as extra outputs) within the case's tolerance.
import { describe, expect, it } from "vitest";
import { compare, type Tensor } from "@attngraph/tensor";
import { exportOnnx } from "./export.js";
import { flexGraphCases, graphCases } from "./test-cases.js";
import { runInOrt } from "./test-ort.js";

const flex = flexGraphCases();
const cases = [...graphCases(), ...flex];

describe.each(["auto", "none"] as const)("golden cases in onnxruntime (contrib %s)", (contrib) => {
  it("finds the cases", () => {
    expect(cases.length).toBeGreaterThan(40);
    expect(flex.length).toBeGreaterThanOrEqual(6); // golden-flex: score-mod and mask-mod nodes
  });

  it.each(cases.map((c) => [c.id, c.gc] as const))("%s", async (_id, gc) => {
    expect(gc.expected.length).toBeGreaterThan(0);
    const nodes = [...new Set(gc.expected.map((e) => e.node))];
    const model = exportOnnx(gc.graph, gc.weights(), { contrib, outputs: nodes });
    const got = await runInOrt(model, gc.inputs, nodes);
    for (const e of gc.expected) {
      const r = compare(got[e.node] as Tensor, e.tensor, gc.tolerance);
      expect(
        r.ok,
        `${e.name}: ${r.failures} of ${e.tensor.size} outside tolerance, worst ${JSON.stringify(r.worst)}${r.shapeMismatch ?? ""}`,
      ).toBe(true);
    }
  });
});
