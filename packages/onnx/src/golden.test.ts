// Every golden case exported to ONNX and run in onnxruntime-node, in both contrib modes: each expected forward tensor
// (the graph's outputs and the named intermediates, exported as extra outputs) within the case's tolerance.
import { describe, expect, it } from "vitest";
import { exportOnnx } from "./export.js";
import { expectGoldenOutputs, flexGraphCases, graphCases } from "./test-cases.js";
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
    expectGoldenOutputs(got, gc);
  });
});
