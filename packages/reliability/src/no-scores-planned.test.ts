// The promise in plans: the worked example's block (a user 0/1 mask, its tril(ones(T, T))) and the copy task's
// training step (Adam through the whole SimpleTransformer) plan no [B, H, T, T] value on any executor: the user mask
// reaches the fused attention as a mask modification, forward and backward. Read from explain()'s step table.
import { adam, createTrainer } from "@attngraph/train";
import { defaultInit, simpleTransformer, transformerBlock } from "@attngraph/nn";
import { compile } from "@attngraph/runtime";
import { describe, expect, it } from "vitest";
import { executors, hangDeadline } from "./executors.js";

/**
 * Step lines of an explain() table whose op makes an [B, H, T, T] value: the unfused chain's (scores, their
 * modifications and masks, the softmax) and its backward's. (Read by op, not by shape: in the copy task D = T = 8.)
 */
const SCORE_OPS = [
  "score",
  "score-mod",
  "mask-mod",
  "mask",
  "alibi",
  "softmax",
  "softmax-grad",
  "mask-grad",
  "score-mod-input-grad",
];
const scoreShaped = (plan: string) =>
  plan.split("\n").filter((l) => SCORE_OPS.includes(/^\d+\s+\S+\s+(\S+)/.exec(l)?.[1] ?? ""));

describe.each(executors.map((e) => [e.name, e] as const))("%s: no [B, H, T, T] value planned", (_name, entry) => {
  it(
    "the worked example's block with its user mask, forward",
    async () => {
      const graph = transformerBlock({ embedDim: 16, nHeads: 4 }, { mask: true });
      const session = await compile(graph, { executors: [await entry.create()], weights: defaultInit(graph, 1) });
      try {
        const plan = session.explain({ inputs: { x: [2, 10, 16], mask: [10, 10] } });
        expect(plan).toContain("mask-mod: mask[q, kv] != 0");
        expect(scoreShaped(plan), plan).toEqual([]);
      } finally {
        await session.dispose();
      }
    },
    hangDeadline(entry),
  );

  it(
    "the copy task's training step (SimpleTransformer, Adam)",
    async () => {
      const graph = simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 }, { loss: true });
      const trainer = await createTrainer(graph, {
        loss: "loss",
        optimizer: adam({ lr: 1e-3 }),
        executors: [await entry.create()],
        weights: defaultInit(graph, 1),
      });
      try {
        const plan = trainer.explain({ inputs: { tokens: [32, 8], targets: [32, 8], "adam.step": [1] } });
        expect(plan).toContain("attention-grad");
        expect(scoreShaped(plan), plan).toEqual([]);
      } finally {
        await trainer.dispose();
      }
    },
    hangDeadline(entry),
  );
});
