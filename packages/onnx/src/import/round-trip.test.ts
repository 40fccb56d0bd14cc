// Every golden case exported by exportOnnx and imported back by importOnnx, in both contrib modes, run on the cpu,
// wasm and webgpu executors: every expected forward tensor (outputs and named intermediates, exported as extra
// outputs and found again by their ONNX value names) within the case's tolerance.
import { describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import type { Executor } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { exportOnnx } from "../export.js";
import { expectGoldenOutputs, flexGraphCases, graphCases } from "../test-cases.js";
import { importOnnx } from "./import-onnx.js";

const cases = [...graphCases(), ...flexGraphCases()];
const executors: [string, () => Executor][] = [
  ["cpu", () => createCpuExecutor()],
  ["wasm", () => createWasmExecutor()],
  ["webgpu", () => createWebGpuExecutor()],
];

describe.each(executors)("golden cases exported and imported again, run on %s", (_executor, make) => {
  it("finds the cases", () => expect(cases.length).toBeGreaterThan(60));

  describe.each(["auto", "none"] as const)("contrib %s", (contrib) => {
    it.each(cases.map((c) => [c.id, c.gc] as const))(
      "%s",
      async (_id, gc) => {
        const nodes = [...new Set(gc.expected.map((e) => e.node))];
        const model = exportOnnx(gc.graph, gc.weights(), { contrib, outputs: nodes });
        const imported = importOnnx(model, {
          shapes: Object.fromEntries(Object.entries(gc.inputs).map(([k, t]) => [k, t.shape])),
        });
        const session = await compile(imported.graph, { executors: [make()], weights: imported.weights });
        const got = await session.run(gc.inputs).finally(() => session.dispose());
        expectGoldenOutputs(got, gc);
      },
      // A case's first run on webgpu compiles its pipelines (seconds on SwiftShader, more on a loaded machine).
      120_000,
    );
  });
});

describe("the round trip keeps the names", () => {
  it.each(cases.map((c) => [c.id, c.gc] as const))(
    "%s: every weight under its own name, every tapped node found by its name",
    (_id, gc) => {
      const weights = gc.weights();
      const nodes = [...new Set(gc.expected.map((e) => e.node))];
      const imported = importOnnx(exportOnnx(gc.graph, weights, { outputs: nodes }), {
        shapes: Object.fromEntries(Object.entries(gc.inputs).map(([k, t]) => [k, t.shape])),
      });
      for (const name of Object.keys(weights)) expect(Object.keys(imported.weights), name).toContain(name);
      for (const node of nodes) expect(imported.resolve(node)).toEqual([node]);
    },
  );
});
