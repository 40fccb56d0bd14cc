// The README's example, as written there (console output aside).
import { expect, it } from "vitest";
import { multiHeadAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";

it("README example: compile onto webgpu, tap weights, run", async () => {
  const rand = (shape: number[]) =>
    Tensor.from(
      Array.from({ length: shape.reduce((a, d) => a * d, 1) }, () => Math.random() - 0.5),
      shape,
    );
  const graph = multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true });
  const weights = Object.fromEntries(graph.weights.map((w) => [w.name, rand(w.shape as number[])]));
  const webgpu = createWebGpuExecutor();
  const session = await compile(graph, { executors: [webgpu, createCpuExecutor()], weights });
  const seen: string[] = [];
  session.tap("weights").subscribe(({ tensor }) => seen.push(`weights ${tensor.shape.join("x")}`));
  const { output } = await session.run({ x: rand([1, 4, 8]) });
  expect(output!.shape).toEqual([1, 4, 8]);
  expect(seen).toEqual(["weights 1x2x4x4"]);
  expect(webgpu.stats.readbacks).toBe(2);
  expect(session.plan.steps.every((s) => s.placement.executor === "webgpu")).toBe(true);
  await session.dispose();
  await webgpu.dispose();
});
