import { describe, expect, it } from "vitest";
import { makeBlockProblem, makeDecodeProblem, makeProblem } from "../problem.js";
import {
  decodeAsAttention,
  lastPositions,
  maxAbsDiff,
  referenceAttention,
  referenceBlock,
  referenceDecode,
} from "../test-reference.js";
import { attngraphExecutors, attngraphImpl, benchGraph } from "./attngraph.js";

describe("attngraph impls", () => {
  it("has one per executor, and the cpu one computes the benchmark's attention", async () => {
    expect(Object.keys(attngraphExecutors)).toContain("cpu");
    const p = makeProblem({ b: 2, t: 6, d: 8, h: 2 });
    const runner = await attngraphImpl("cpu").setup(p, { threads: 1 });
    const out = await runner.run();
    expect(out).toHaveLength(2 * 6 * 8);
    expect(maxAbsDiff(out, referenceAttention(p))).toBeLessThan(1e-6);
    expect(runner.threads).toBe(1);
    await runner.dispose();
  });

  it("builds the transformer block with transformerBlock, weights by state_dict name, and the cpu one computes it", async () => {
    for (const shape of [
      { b: 2, t: 6, d: 8, h: 2 },
      { b: 1, t: 5, d: 12, h: 3 },
    ]) {
      const p = makeBlockProblem(shape, 5);
      const { graph, weights } = benchGraph(p);
      expect(graph.inputs.map((i) => i.name)).toEqual(["x"]); // causal by attribute: no mask input
      expect(Object.keys(weights).sort()).toEqual(graph.weights.map((w) => w.name).sort());
      const runner = await attngraphImpl("cpu").setup(p, { threads: 1 });
      try {
        expect(maxAbsDiff(await runner.run(), referenceBlock(p))).toBeLessThan(1e-5);
      } finally {
        await runner.dispose();
      }
    }
  });

  it("subscribes events$ and taps every node when asked, and unsubscribes", async () => {
    const p = makeProblem({ b: 1, t: 4, d: 8, h: 2 });
    const runner = await attngraphImpl("cpu").setup(p, { threads: 1 });
    const plain = await runner.run();
    expect(runner.observed()).toBe(0);
    let seen = 0;
    for (const mode of ["events$", "tap-all"] as const) {
      const unsubscribe = runner.streams![mode]();
      // Observing may change the plan (a tapped node is not fused away), so equal up to rounding, not bit for bit.
      expect(maxAbsDiff(await runner.run(), plain)).toBeLessThan(1e-6);
      expect(runner.observed()).toBeGreaterThan(seen + 2); // run-start, node events or one tensor per node, run-end
      seen = runner.observed();
      unsubscribe();
      await runner.run();
      expect(runner.observed()).toBe(seen);
    }
    await runner.dispose();
  });

  it("reports the session's planned peak for the run's input shapes", async () => {
    const p = makeProblem({ b: 1, t: 16, d: 8, h: 2 }, 1);
    const runner = await attngraphImpl("cpu").setup(p, { threads: 1 });
    // Fused causal MHA at B1 T16 E8: q, k, v and the context heads are alive together (4 × 16 × 8 float32).
    expect(runner.plannedPeakBytes).toBe(4 * 16 * 8 * 4);
    await runner.dispose();
  });

  it("decode: one new token over the prompt's cache, every run from the same T positions, equal to the full causal run's last row", async () => {
    for (const shape of [
      { b: 2, t: 6, d: 8, h: 2 },
      { b: 1, t: 5, d: 12, h: 3 },
    ]) {
      const p = makeDecodeProblem(shape, 4);
      const runner = await attngraphImpl("cpu").setup(p, { threads: 1 });
      const full = await attngraphImpl("cpu").setup(decodeAsAttention(p), { threads: 1 });
      try {
        const out = await runner.run();
        expect(out).toHaveLength(shape.b * shape.d);
        expect(maxAbsDiff(out, referenceDecode(p))).toBeLessThan(1e-6);
        expect(maxAbsDiff(out, lastPositions(await full.run(), shape, shape.t + 1))).toBeLessThan(1e-6);
        expect(await runner.run()).toEqual(out); // truncate(T) before each step: the same cache every run
        expect(runner.plannedPeakBytes).toBeGreaterThan(0); // the timed step's plan (decoder.memoryPlan at P = T)
      } finally {
        await runner.dispose();
        await full.dispose();
      }
    }
  });

  it("refuses an executor it does not know", () => {
    expect(() => attngraphImpl("webgpu-not-yet")).toThrow(/no attngraph executor/);
  });
});
