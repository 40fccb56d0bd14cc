// Training-mode dropout on every executor draws a new mask on every run (issue 26, item 4: the mask was the same at
// every step, so a trainer trained one fixed sub-network): run k drops exactly what the generator drops under
// dropoutSeedAt(seed, k), the same elements as cpu at the same step; the fused forward and backward (attention,
// attention-grad) drop what the unfused chain drops at that step; and a trainer's step t draws step t − 1's mask.
import { attentionWeights, buildAttention, normalizeConfig } from "@attngraph/attention";
import { grad } from "@attngraph/autodiff";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { dropoutKeep, dropoutSeedAt } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { dense, mismatch } from "./check.js";
import { executors } from "./executors.js";
import { prng, uniform } from "./prng.js";

// Not causal: every weight is > 0 before dropout, so a weight is 0 exactly where dropout dropped it.
const config = normalizeConfig({ dIn: 8, dOut: 8, numHeads: 2, dropout: 0.4, outProj: true });
const SEED = 777;
const [B, T] = [2, 6];
const next = prng(5);
const raw = {
  W_query: new Tensor(uniform(64, 0.4, next), [8, 8]),
  W_key: new Tensor(uniform(64, 0.4, next), [8, 8]),
  W_value: new Tensor(uniform(64, 0.4, next), [8, 8]),
  out_proj: new Tensor(uniform(64, 0.4, next), [8, 8]),
  out_bias: new Tensor(uniform(8, 0.4, next), [8]),
};
const weights = attentionWeights(config, raw);
const x = new Tensor(uniform(B * T * 8, 1, next), [B, T, 8]);
const STEPS = 3;

/** The generator's keep mask of the [B, H, T, T] weights at dropout step `step`. */
const expectedKept = (step: number) =>
  Array.from({ length: B * 2 * T * T }, (_, i) => dropoutKeep(dropoutSeedAt(SEED, step), i, 0.4));

describe.each(executors.map((e) => [e.name, e] as const))("%s: dropout masks per run", (_name, entry) => {
  it("run k drops what the generator drops at step k (a new mask each run); fused and unfused outputs agree at each step", async () => {
    const executor = await entry.create();
    const graph = buildAttention(config, { training: true, seed: SEED });
    const tapped = await compile(graph, { executors: [executor], weights });
    const fused = await compile(graph, { executors: [executor], weights });
    try {
      const masks: boolean[][] = [];
      for (let k = 0; k < STEPS; k++) {
        let w: Tensor | undefined;
        const unfusedOut = (await tapped.run({ x }, { tap: { nodes: "weights", next: (e) => (w = e.tensor) } }))
          .output!;
        const fusedOut = (await fused.run({ x })).output!;
        const kept = Array.from(w!.toFloat32Array(), (v) => v !== 0);
        expect(kept, `run ${k}: the mask of step ${k}`).toEqual(expectedKept(k));
        masks.push(kept);
        const want = dense(unfusedOut);
        expect(
          mismatch(`run ${k}: fused vs unfused output`, dense(fusedOut), want, { abs: 1e-5, rel: 1e-5 }),
        ).toBeUndefined();
      }
      expect(masks[1]).not.toEqual(masks[0]);
      expect(masks[2]).not.toEqual(masks[1]);
    } finally {
      await tapped.dispose();
      await fused.dispose();
      await executor.dispose?.();
    }
  });

  it("the fused backward drops what the unfused backward drops at the same step, and the steps differ", async () => {
    const executor = await entry.create();
    const cpu = createCpuExecutor();
    const forward = buildAttention(config, { training: true, seed: SEED });
    const g = grad(forward, { loss: "output", wrt: ["x", ...forward.weights.map((w) => w.name)] });
    const names = ["x", ...forward.weights.map((w) => w.name)].map((n) => g.grads[n]!);
    const feeds = { x, [g.seed!]: new Tensor(uniform(B * T * 8, 1, prng(9)), [B, T, 8]) };
    const fused = await compile(g.graph, { executors: [executor], weights });
    const unfused = await compile(g.graph, { executors: [cpu], weights, fusion: false });
    try {
      expect(
        fused.plan.steps.some((s) => s.kind === "attention-grad"),
        "the plan uses the fused backward",
      ).toBe(true);
      const previous: number[][] = [];
      for (const step of [0, 1, 5]) {
        const got = await fused.run(feeds, { dropoutStep: step });
        const want = await unfused.run(feeds, { dropoutStep: step });
        for (const n of names) {
          const ref = dense(want[n]!);
          const scale = 1 + Math.max(...Array.from(ref.data, Math.abs));
          expect(
            mismatch(`${n} at step ${step}`, dense(got[n]!), ref, { abs: 1e-4 * scale, rel: 1e-4 }),
          ).toBeUndefined();
        }
        const dq = got[g.grads["W_query"]!]!.toArray();
        for (const p of previous) expect(dq, `W_query.grad at step ${step} equals an earlier step's`).not.toEqual(p);
        previous.push(dq);
      }
    } finally {
      await fused.dispose();
      await unfused.dispose();
      await executor.dispose?.();
    }
  });
});
