// Every golden-models case (the public ones and this repo's extras) as its loaded model's graph, exported by
// exportOnnx and imported back by importOnnx, on cpu, wasm and webgpu: PyTorch's logits, loss or output, and every
// weight under its checkpoint name (so that setWeights and patching still reach them).
import { readFileSync } from "node:fs";
import { exportOnnx, importOnnx } from "@attngraph/onnx";
import { compile } from "@attngraph/runtime";
import { compare, Tensor } from "@attngraph/tensor";
import { goldenModelsDir, goldenModelsExtraDir, listCases, parseModelCase } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { executorsFor } from "../executors.js";
import { modelCaseSubject } from "./model-subject.js";

const cases = [goldenModelsDir, goldenModelsExtraDir].flatMap((dir) =>
  listCases(dir).map((file) => parseModelCase(JSON.parse(readFileSync(file, "utf8")), file)),
);

describe.each(["cpu", "wasm", "webgpu"])("golden-models cases exported and imported again, on %s", (executor) => {
  it("finds the cases", () => expect(cases.length).toBeGreaterThanOrEqual(12));

  it.each(cases.map((c) => [c.name, c] as const))(
    "%s",
    async (_name, c) => {
      const { graph, weights, inputs } = modelCaseSubject(c);
      const imported = importOnnx(exportOnnx(graph, weights), {
        shapes: Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.shape])),
      });
      for (const name of Object.keys(weights)) expect(Object.keys(imported.weights), name).toContain(name);
      const session = await compile(imported.graph, { executors: executorsFor(executor), weights: imported.weights });
      const out = await session.run(inputs).finally(() => session.dispose());
      const expected: [string, Tensor][] = [
        ...(c.expected.logits ? [["logits", c.expected.logits] as [string, Tensor]] : []),
        ...(c.expected.output ? [["output", c.expected.output] as [string, Tensor]] : []),
        ...(c.expected.loss !== undefined ? [["loss", Tensor.from([c.expected.loss], [])] as [string, Tensor]] : []),
      ];
      expect(expected.length).toBeGreaterThan(0);
      for (const [name, want] of expected) {
        const r = compare(out[name]!, want, c.tolerance);
        expect(r.ok, `${name}: ${r.failures} off, worst ${JSON.stringify(r.worst)}`).toBe(true);
      }
    },
    120_000,
  ); // the first webgpu session starts the device and compiles its shaders (SwiftShader: slow)
});
