// A trainer with dropout trains a new sub-network at every step (issue 26, item 4): step t draws the masks of dropout
// step t − 1 (the seeds' own at step 1), as PyTorch draws a new mask per forward.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { dropoutKeep, dropoutSeedAt } from "@attngraph/graph";
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { adam } from "./optimizer.js";
import { createTrainer } from "./trainer.js";

const [V, E, H, T, B] = [10, 16, 2, 6, 2];
const SEED = 31;
const RATE = 0.3;
const tokens = Tensor.int32(
  Array.from({ length: B * T }, (_, i) => (i * 7) % V),
  [B, T],
);

/** Which weights the generator keeps in block 0 (seed SEED) at dropout step `step`, where a weight is visible. */
const keptAt = (step: number) =>
  Array.from({ length: B * H * T * T }, (_, i) => dropoutKeep(dropoutSeedAt(SEED, step), i, RATE));

describe("trainer with dropout", () => {
  it("step t drops what dropout step t − 1 drops: a new mask each step", async () => {
    const graph = simpleTransformer(
      { vocabSize: V, embedDim: E, nHeads: H, seqLen: T, dropout: RATE },
      { loss: true, training: true, seed: SEED },
    );
    const trainer = await createTrainer(graph, {
      loss: "loss",
      optimizer: adam({ lr: 1e-3 }),
      executors: [createCpuExecutor()],
      weights: defaultInit(graph, 1),
    });
    const masks: boolean[][] = [];
    const sub = trainer.session
      .tap("transformer.attention.weights")
      .subscribe((e) => masks.push(Array.from(e.tensor.toFloat32Array(), (v) => v !== 0)));
    try {
      for (let t = 1; t <= 3; t++) await trainer.step({ tokens, targets: tokens });
      sub.unsubscribe();
      masks.forEach((m, k) => {
        const want = keptAt(k);
        // Causal: a hidden weight (key after the query) is 0 whether dropped or not; a visible one is 0 iff dropped.
        m.forEach((kept, i) => {
          const [q, key] = [Math.floor(i / T) % T, i % T];
          if (key <= q) expect(kept, `step ${k + 1}, element ${i}`).toBe(want[i]);
        });
      });
      expect(masks[1]).not.toEqual(masks[0]);
      expect(masks[2]).not.toEqual(masks[1]);
    } finally {
      sub.unsubscribe();
      await trainer.dispose();
    }
  });
});
