// Every golden case of the testkit through the path a user takes (builder → compile → tap → run) on the webgpu
// executor alone: once with the expected nodes tapped (the unfused chain), once untapped (the scheduler fuses the
// middle into the `attention` kernel) comparing the output.
import { describe, expect, it } from "vitest";
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { compare, type Tensor } from "@attngraph/tensor";
import { goldenDir, listCases, loadCase } from "@attngraph/testkit";
import { createWebGpuExecutor } from "./index.js";

const files = listCases(goldenDir);
const webgpu = createWebGpuExecutor();

describe("golden cases through compile on webgpu", () => {
  it("finds the golden cases", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((f) => [f.slice(goldenDir.length + 1), f]))("%s", async (_name, file) => {
    const c = loadCase(file);
    const graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs });
    const session = await compile(graph, { executors: [webgpu], weights: attentionWeights(c.config, c.weights) });
    const nodeFor = (n: string) => (n === "output" ? graph.outputs[0]! : n);
    try {
      expect(
        session.plan.steps.every((s) => s.placement.executor === "webgpu"),
        "every step placed on webgpu",
      ).toBe(true);
      // Tapped: the chain runs unfused and every expected tensor is delivered.
      const got = new Map<string, Tensor>();
      const wanted = new Set(Object.keys(c.expected).map(nodeFor));
      const sub = session.tap((n) => wanted.has(n)).subscribe((e) => got.set(e.node, e.tensor));
      await session.run(c.inputs);
      sub.unsubscribe();
      for (const [name, want] of Object.entries(c.expected)) {
        const r = compare(got.get(nodeFor(name))!, want, c.tolerance);
        expect({ name, ok: r.ok, worst: r.worst }).toMatchObject({ name, ok: true });
      }
      // Untapped: the fused kernel.
      expect(session.plan.steps.map((s) => s.kind)).toContain("attention");
      const outputs = await session.run(c.inputs);
      const r = compare(outputs[graph.outputs[0]!]!, c.expected["output"] ?? c.expected["context"]!, c.tolerance);
      expect({ fused: true, ok: r.ok, worst: r.worst }).toMatchObject({ fused: true, ok: true });
    } finally {
      await session.dispose();
    }
  });
});
