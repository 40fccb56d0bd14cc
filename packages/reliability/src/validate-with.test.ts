// validateWith on every executor: the attention graph and a transformer block's training step, validated node by node
// against cpu, report no disagreement (default tolerance); the same check is what finds a broken kernel (runtime tests).
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile, type SessionEvent } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { executors } from "./executors.js";
import { prng, uniform } from "./prng.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, numKvHeads: 1, causal: true, outProj: true, outBias: true };
const next = prng(31);
const w = (r: number, c: number) => new Tensor(uniform(r * c, 0.35, next), [r, c]);
const weights = attentionWeights(config, {
  W_query: w(8, 8),
  W_key: w(4, 8),
  W_value: w(4, 8),
  out_proj: w(8, 8),
  out_bias: w(1, 8).reshape([8]),
});
const x = new Tensor(uniform(2 * 70 * 8, 1, next), [2, 70, 8]);

describe.each(executors.filter((e) => e.name !== "cpu").map((e) => [e.name, e] as const))(
  "%s validated against cpu",
  (_name, entry) => {
    it("every node of a GQA causal attention (T = 70, fused and tapped) agrees with cpu", async () => {
      const s = await compile(buildAttention(config), {
        executors: [await entry.create()],
        weights,
        validateWith: createCpuExecutor(),
        validate: { mode: "warn" },
      });
      try {
        const mismatches: SessionEvent[] = [];
        s.events$.subscribe((e) => e.type === "validation-mismatch" && mismatches.push(e));
        await s.run({ x });
        const sub = s.tap(["weights", "masked"]).subscribe();
        await s.run({ x });
        sub.unsubscribe();
        expect(mismatches).toEqual([]);
      } finally {
        await s.dispose();
      }
    });
  },
);
