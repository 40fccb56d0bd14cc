import { buildAttention } from "@attngraph/attention";
import { describe, expect, it } from "vitest";
import { resolveShapes } from "./bind.js";
import { planBuffers } from "./buffers.js";
import { explain } from "./explain.js";
import { lower } from "./lower.js";
import { fakeExecutor } from "./test-executors.js";

const config = { dIn: 768, dOut: 768, numHeads: 12, causal: true };
const weights = { W_query: [768, 768], W_key: [768, 768], W_value: [768, 768], out_proj: [768, 768], out_bias: [768] };

function planned(fused: boolean, t = 1024, fusedQkv = false) {
  const plan = lower(buildAttention(config, { fusedQkv }), {
    executors: [fakeExecutor("cpu", fused ? "fused" : "all")],
  });
  const w = fusedQkv ? { W_qkv: [3 * 768, 768], out_proj: [768, 768], out_bias: [768] } : weights;
  const shapes = resolveShapes(plan, { x: [1, t, 768] }, w);
  return { plan, shapes, memory: planBuffers(plan, shapes, () => true) };
}

describe("buffer planning", () => {
  it("never lets two values that are alive at the same step overlap", () => {
    for (const [fused, fusedQkv] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const { plan, shapes, memory } = planned(fused, 37, fusedQkv);
      const idx = new Map(plan.steps.map((s, i) => [s.node, i] as const));
      const root = (v: string): string => {
        const s = plan.steps[idx.get(v) ?? -1];
        // A view aliases its input, and so may a "copy" step (it copies only when a view is impossible).
        return s && s.layout !== "compute" ? root(s.inputs[0]!) : v;
      };
      // Liveness recomputed independently: from the writing step to the last read of the value or of any view of it.
      const live = new Map<string, [number, number]>();
      plan.steps.forEach((s, i) => {
        if (memory.offsets.has(s.node)) live.set(s.node, [i, i]);
        for (const v of s.inputs) if (v && memory.offsets.has(root(v))) live.get(root(v))![1] = i;
      });
      for (const o of plan.outputs) live.get(root(o))![1] = plan.steps.length;
      // An in-place op (mask, softmax, dropout) may take over the input that dies at its step.
      plan.steps.forEach((s, i) => {
        const k = s.fused ? undefined : plan.graph.registry.get(s.kind).inPlace;
        const u = k === undefined ? undefined : s.inputs[k];
        if (u && live.get(u)?.[1] === i) live.get(u)![1] = i - 0.5;
      });
      const entries = [...memory.offsets].map(([n, { offset }]) => ({
        n,
        offset,
        size: shapes.get(n)!.reduce((a, d) => a * d, 1),
        life: live.get(n)!,
      }));
      for (const a of entries) {
        for (const b of entries) {
          if (a.n >= b.n) continue;
          const timeOverlap = a.life[0] <= b.life[1] && b.life[0] <= a.life[1];
          const spaceOverlap = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
          expect(timeOverlap && spaceOverlap, `${a.n} and ${b.n} share memory while both alive`).toBe(false);
        }
      }
    }
  });

  it("plans unfused T=1024 causal MHA at no more than half of the unplanned sum (scores → masked → weights in place)", () => {
    const { memory } = planned(false);
    expect(memory.peakBytes).toBeGreaterThan(0);
    expect(memory.peakBytes / memory.unplannedBytes).toBeLessThanOrEqual(0.5);
    expect(memory.offsets.get("masked")!.offset).toBe(memory.offsets.get("scores")!.offset);
  });

  it("plans fused T=1024 causal MHA at the minimum: q, k, v and the context heads, alive together at the attention step", () => {
    const { memory } = planned(true);
    expect(memory.peakBytes).toBe(4 * 1024 * 768 * 4);
    expect(memory.peakBytes).toBeLessThan(planned(false).memory.peakBytes / 4);
  });

  it("does not plan values on executors that take no planned destinations", () => {
    const { plan, shapes } = planned(false, 8);
    expect(planBuffers(plan, shapes, () => false).offsets.size).toBe(0);
  });

  it("explain() prints the planned peak against the unplanned sum", () => {
    const { plan, memory } = planned(false);
    expect(explain(plan, memory)).toMatch(
      /memory: [\d.]+ MiB planned peak \(arena\) vs [\d.]+ MiB for all intermediates unplanned \([\d.]+%\)/,
    );
  });
});
