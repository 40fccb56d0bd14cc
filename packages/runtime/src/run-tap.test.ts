// A run's own tap (`run(inputs, { tap })`): it sees its run's values only, and no other run sees it, however many runs
// are in flight; a session tap subscribed for one call would (issue 26, item 1).
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphValidationError } from "@attngraph/graph";
import type { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import type { TapEvent } from "./events.js";
import { TapError } from "./errors.js";
import { randomTensor, rawAttentionWeights } from "./test-random.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true, outProj: true, outBias: false };
const raw = rawAttentionWeights(config, randomTensor, false);
const session = (taps?: { delivery: "settle" | "detached"; buffer: number }) =>
  compile(buildAttention(config), {
    executors: [createCpuExecutor()],
    weights: attentionWeights(config, raw),
    ...(taps ? { taps } : {}),
  });

describe("run taps", () => {
  it("20 runs in flight each get exactly their own tensors, under their own run id, equal to the run alone", async () => {
    const s = await session();
    const xs = Array.from({ length: 20 }, (_, i) => randomTensor([1, 1 + (i % 7), 8], 50 + i));
    const alone: Tensor[] = [];
    for (const x of xs) {
      let got: Tensor | undefined;
      // The same nodes as below: taps decide lowering, and the fused chain rounds differently.
      await s.run(
        { x },
        { tap: { nodes: ["context", "weights"], next: (e) => e.node === "context" && (got = e.tensor) } },
      );
      alone.push(got!);
    }
    const seen = xs.map(() => [] as TapEvent[]);
    await Promise.all(
      xs.map((x, i) => s.run({ x }, { tap: { nodes: ["context", "weights"], next: (e) => seen[i]!.push(e) } })),
    );
    seen.forEach((events, i) => {
      expect(events.map((e) => e.node).sort(), `run ${i}`).toEqual(["context", "weights"]);
      expect(new Set(events.map((e) => e.runId)).size, `run ${i}: one run id`).toBe(1);
      const context = events.find((e) => e.node === "context")!.tensor;
      expect(context.shape, `run ${i}`).toEqual([1, 1 + (i % 7), 8]);
      expect(context.toArray(), `run ${i}`).toEqual(alone[i]!.toArray());
    });
    // Ids differ between runs.
    expect(new Set(seen.map((e) => e[0]!.runId)).size).toBe(20);
  });

  it("a session tap does not see a run tap's nodes of other runs, and a run tap does not join the session's taps", async () => {
    const s = await session();
    const sessionSeen: TapEvent[] = [];
    const sub = s.tap("weights").subscribe((e) => sessionSeen.push(e));
    const own: TapEvent[] = [];
    await Promise.all([
      s.run({ x: randomTensor([1, 3, 8], 7) }, { tap: { nodes: "context", next: (e) => own.push(e) } }),
      s.run({ x: randomTensor([1, 5, 8], 8) }),
    ]);
    sub.unsubscribe();
    expect(own.map((e) => e.node)).toEqual(["context"]);
    expect(own[0]!.tensor.shape).toEqual([1, 3, 8]);
    expect(sessionSeen.map((e) => e.node)).toEqual(["weights", "weights"]); // both runs, its own node only
  });

  it("delivers before the run settles even when the session's taps are detached", async () => {
    const s = await session({ delivery: "detached", buffer: 1 });
    const got: string[] = [];
    await s.run(
      { x: randomTensor([1, 4, 8], 3) },
      { tap: { nodes: ["queries", "keys", "values", "weights"], next: (e) => got.push(e.node) } },
    );
    expect(got.sort()).toEqual(["keys", "queries", "values", "weights"]); // none dropped by the session's buffer of 1
  });

  it("bad run taps are typed errors before anything runs; the session stays usable", async () => {
    const s = await session();
    const x = randomTensor([1, 2, 8], 4);
    await expect(s.run({ x }, { tap: { nodes: "nope", next: () => undefined } })).rejects.toThrow(GraphValidationError);
    await expect(s.run({ x }, { tap: null as never })).rejects.toThrow(/run options\.tap: invalid run tap/);
    await expect(s.run({ x }, { tap: { nodes: "weights" } as never })).rejects.toThrow(/run options\.tap/);
    const broken = () => {
      throw new Error("boom");
    };
    await expect(s.run({ x }, { tap: { nodes: broken, next: () => undefined } })).rejects.toThrow(TapError);
    expect((await s.run({ x })).output!.shape).toEqual([1, 2, 8]);
  });
});
