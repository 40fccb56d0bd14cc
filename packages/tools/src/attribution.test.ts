// attributeHeads on the fixture's attention (cpu). The output is linear in the per-head context, so activation ×
// gradient of a head is exactly what zero-ablating it removes from the metric, and attribution patching is exactly
// patchFrom's per-head effect: both are checked against those runs, not against the formula.
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { ablateHeads } from "./ablate.js";
import { attributeHeads } from "./attribution.js";
import { runWithCache } from "./cache.js";
import { patchFrom } from "./patching.js";
import { B, E, H, T, clean, config, corrupted, session, u, weights } from "./test-fixture.js";

const graph = buildAttention(config);
// A logit-difference-like metric: +1 at one output element, −1 at another, and small weights elsewhere.
const seed = (() => {
  const s = u([B, T, E], 0.1).toFloat32Array().slice();
  s[3] = 1;
  s[B * T * E - 5] = -1;
  return new Tensor(s, [B, T, E]);
})();
const metricOf = (out: Tensor) => out.toFloat32Array().reduce((a, v, i) => a + v * seed.toFloat32Array()[i]!, 0);

describe("attributeHeads", () => {
  it("activation × gradient of each head of context.heads is what zero-ablating that head takes off the metric", async () => {
    const r = await attributeHeads(graph, {
      executors: [createCpuExecutor()],
      weights,
      inputs: { x: clean },
      nodes: ["context.heads"],
      metric: "output",
      seed,
    });
    const s = await session();
    const full = metricOf((await s.run({ x: clean })).output!);
    expect(r.metric).toBeCloseTo(full, 5);
    const [node] = r.nodes;
    expect(node!.perHead).toHaveLength(H);
    expect(node!.perBatch).toHaveLength(B);
    for (let h = 0; h < H; h++) {
      const remove = ablateHeads(s, "context.heads", [h]);
      const without = metricOf((await s.run({ x: clean })).output!);
      remove();
      expect(node!.perHead[h]).toBeCloseTo(full - without, 4);
      expect(node!.perBatch.reduce((a, row) => a + row[h]!, 0)).toBeCloseTo(node!.perHead[h]!, 6);
    }
  });

  it("with a corrupted input it is attribution patching: each head's estimate equals patchFrom's per-head effect", async () => {
    const r = await attributeHeads(graph, {
      executors: [createCpuExecutor()],
      weights,
      inputs: { x: clean },
      corrupted: { x: corrupted },
      nodes: ["context.heads", "weights"],
      metric: "output",
      seed,
    });
    const s = await session();
    const cache = await runWithCache(s, { x: clean }, ["context.heads"]);
    const patched = await patchFrom(
      s,
      cache,
      { x: corrupted },
      { nodes: ["context.heads"], perHead: true, metric: (o) => metricOf(o["output"]!) },
    );
    expect(r.metric).toBeCloseTo(patched.corrupted, 5);
    for (const e of patched.effects) expect(r.nodes[0]!.perHead[e.head!]).toBeCloseTo(e.effect, 4);
    // `weights` feeds the output nonlinearly only through softmax upstream of it; from weights on it is linear too.
    const wPatched = await patchFrom(
      s,
      await runWithCache(s, { x: clean }, ["weights"]),
      { x: corrupted },
      { nodes: ["weights"], perHead: true, metric: (o) => metricOf(o["output"]!) },
    );
    for (const e of wPatched.effects) expect(r.nodes[1]!.perHead[e.head!]).toBeCloseTo(e.effect, 4);
  });

  it("bad options are typed errors naming the field", async () => {
    const base = { executors: [createCpuExecutor()], weights, inputs: { x: clean } };
    await expect(attributeHeads(graph, { ...base, nodes: ["nope"], metric: "output", seed })).rejects.toThrow(
      /attributeHeads\.nodes nope/,
    );
    await expect(attributeHeads(graph, { ...base, nodes: [], metric: "output", seed })).rejects.toThrow(
      /nothing to attribute/,
    );
    await expect(attributeHeads(graph, { ...base, nodes: ["context.heads"], metric: "output" })).rejects.toThrow(
      /not a scalar: give `seed`/,
    );
    // A corrupted input of another length: the seed no longer fits that run, and the error says which input.
    await expect(
      attributeHeads(graph, {
        ...base,
        nodes: ["context.heads"],
        metric: "output",
        seed,
        corrupted: { x: u([B, T + 1, 8], 1) },
      }),
    ).rejects.toThrow(/input output\.grad: dim 1 \(T\)/);
  });
});
