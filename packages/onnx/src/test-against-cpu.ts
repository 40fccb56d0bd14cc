// An exported graph run in onnxruntime against the same graph compiled on attngraph's cpu executor, the reference
// numerics (tests only). Every graph output is compared; a model onnxruntime rejects fails the test.
import { expect } from "vitest";
import type { OpGraph } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { compare, Tensor, type AnyTensor } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import { exportOnnxWithReport, type ExportOptions } from "./export.js";
import type { ExportReport } from "./report.js";
import { runInOrt } from "./test-ort.js";

/** A float tensor of values in [-scale, scale) from a seeded generator. */
export function randomTensor(shape: readonly number[], seed: number, scale = 1): Tensor {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, d) => a * d, 1) }, () => (next() * 2 - 1) * scale),
    shape,
  );
}

/** Exports, runs both sides, expects every output within tolerance; returns the export's report. */
export async function expectOrtMatchesCpu(
  graph: OpGraph,
  weights: Readonly<Record<string, AnyTensor>>,
  inputs: Readonly<Record<string, AnyTensor>>,
  options: ExportOptions,
  tolerance = { abs: 2e-5, rel: 2e-4 },
): Promise<ExportReport> {
  const { model, report } = exportOnnxWithReport(graph, weights, options);
  const session = await compile(graph, { executors: [createCpuExecutor()], weights });
  const expected = await session.run(inputs).finally(() => session.dispose());
  const got = await runInOrt(model, inputs, graph.outputs);
  for (const name of graph.outputs) {
    const r = compare(got[name] as Tensor, expected[name] as Tensor, tolerance);
    expect(
      r.ok,
      `${name}: ${r.failures} of ${(expected[name] as Tensor).size} differ, worst ${JSON.stringify(r.worst)} ${r.shapeMismatch ?? ""}`,
    ).toBe(true);
  }
  return report;
}
