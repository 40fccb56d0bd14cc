// Clean → corrupted activation patching on the fixture's attention (cpu): whole nodes and per head.
import { GraphValidationError } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { runWithCache } from "./cache.js";
import { patchFrom } from "./patching.js";
import type { Tensor } from "@attngraph/tensor";
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { B, T, clean, config, corrupted, session, sum, u, weights } from "./test-fixture.js";

describe("patchFrom (clean → corrupted)", () => {
  it("patching the output restores the clean metric; per-head effects of the context add up to the whole node's", async () => {
    const s = await session();
    const cleanRun = await runWithCache(s, { x: clean }, ["output", "context.heads", "queries"]);
    const result = await patchFrom(
      s,
      cleanRun,
      { x: corrupted },
      { nodes: ["output", "context.heads", "queries"], metric: (o) => sum(o.output!) },
    );
    expect(result.clean).toBeCloseTo(sum(cleanRun.outputs.output!), 5);
    const byNode = new Map(result.effects.map((e) => [e.node, e]));
    expect(byNode.get("output")!.recovered).toBeCloseTo(1, 5);
    // The output is linear in the context: patching all of it restores everything too.
    expect(byNode.get("context.heads")!.recovered).toBeCloseTo(1, 4);
    const perHead = await patchFrom(
      s,
      cleanRun,
      { x: corrupted },
      { nodes: ["context.heads"], metric: (o) => sum(o.output!), perHead: true },
    );
    expect(perHead.effects.map((e) => e.head)).toEqual([0, 1, 2]);
    const total = perHead.effects.reduce((a, e) => a + e.effect, 0);
    expect(total).toBeCloseTo(byNode.get("context.heads")!.effect, 4);
  });

  it("a node missing from the clean cache is an error naming it", async () => {
    const s = await session();
    const cleanRun = await runWithCache(s, { x: clean }, ["queries"]);
    await expect(
      patchFrom(s, cleanRun, { x: corrupted }, { nodes: ["weights"], metric: (o) => sum(o.output!) }),
    ).rejects.toThrow(GraphValidationError);
    await expect(
      patchFrom(s, cleanRun, { x: u([B, T + 1, 8], 1) }, { nodes: ["queries"], metric: (o) => sum(o.output!) }),
    ).rejects.toThrow(/override of node queries: wrong shape/);
  });

  it("perHead takes the heads axis from the graph: q.split [B, T, H, D] patches per head; [B, T, E] is refused", async () => {
    const s = await session();
    const cleanRun = await runWithCache(s, { x: clean }, ["q.split", "q.heads", "output"]);
    const metric = (o: Readonly<Record<string, Tensor>>) => sum(o.output!);
    const split = await patchFrom(s, cleanRun, { x: corrupted }, { nodes: ["q.split"], metric, perHead: true });
    const heads = await patchFrom(s, cleanRun, { x: corrupted }, { nodes: ["q.heads"], metric, perHead: true });
    expect(split.effects.map((e) => e.head)).toEqual([0, 1, 2]);
    split.effects.forEach((e, h) => expect(e.metric, `head ${h}`).toBe(heads.effects[h]!.metric));
    await expect(
      patchFrom(s, cleanRun, { x: corrupted }, { nodes: ["output"], metric, perHead: true }),
    ).rejects.toThrow(/patchFrom output: the value has no heads axis/);
  });

  it("with training-mode dropout every run draws step 0's masks: patching a node from a clean run made at step 0 recovers it all", async () => {
    const dropped = { ...config, dropout: 0.3 };
    const s = await compile(buildAttention(dropped, { training: true, seed: 11 }), {
      executors: [createCpuExecutor()],
      weights,
    });
    const metric = (o: Readonly<Record<string, Tensor>>) => sum(o.output!);
    await s.run({ x: clean }); // the session's run index moves on; patchFrom's runs do not follow it
    const cleanRun = await runWithCache(s, { x: clean }, ["context.heads"], { dropoutStep: 0 });
    const first = await patchFrom(s, cleanRun, { x: corrupted }, { nodes: ["context.heads"], metric });
    expect(first.effects[0]!.recovered).toBeCloseTo(1, 5);
    const again = await patchFrom(s, cleanRun, { x: corrupted }, { nodes: ["context.heads"], metric });
    expect(again).toEqual(first);
  });
});
