// Gradient accumulation in the trainer: the micro steps update only the accumulators, the last one the parameters;
// n microbatches of equal size train as their concatenation does (the mean loss's gradient is the mean of theirs),
// and a step takes exactly n of them. nanoGPT's numbers against PyTorch are in groups-clip.test.ts.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import { Tensor, compare } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { adam, type AdamOptions } from "./optimizer.js";
import { createTrainer, type TrainerOptions } from "./trainer.js";

const graph = simpleTransformer({ vocabSize: 6, embedDim: 8, nHeads: 2, seqLen: 4 }, { loss: true });
/** Rows [from, from + n) of a fixed token table (row r, column c: a function of r · 4 + c). */
const rows = (from: number, n: number) =>
  Tensor.int32(
    Array.from({ length: n * 4 }, (_, i) => ((from * 4 + i) * 5 + (((from * 4 + i) * 7) >> 2)) % 6),
    [n, 4],
  );
const weights = defaultInit(graph, 7);
/** A trainer of `graph` from `weights` on a new CPU executor, with Adam at lr 1e-2 (and `adamOptions`). */
const trainerOf = (options: Partial<TrainerOptions> = {}, adamOptions: Partial<AdamOptions> = {}) =>
  createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: 1e-2, ...adamOptions }),
    executors: [createCpuExecutor()],
    weights,
    ...options,
  });

describe("gradient accumulation", () => {
  it("2 microbatches of 3 rows train as one batch of 6 (losses, norms and parameters), with clipping", async () => {
    const decayed = { decoupled: true, weightDecay: 0.1 };
    const whole = await trainerOf({ clipGradNorm: 0.5 }, decayed);
    const split = await trainerOf({ clipGradNorm: 0.5, accumulate: 2 }, decayed);
    const norms: [number[], number[]] = [[], []];
    whole.steps$.subscribe((e) => norms[0].push(e.gradNorm!));
    split.steps$.subscribe((e) => norms[1].push(e.gradNorm!));
    for (let s = 0; s < 4; s++) {
      const all = rows(s * 6, 6);
      const a = rows(s * 6, 3);
      const b = rows(s * 6 + 3, 3);
      const lw = await whole.step({ tokens: all, targets: all });
      const ls = await split.step([
        { tokens: a, targets: a },
        { tokens: b, targets: b },
      ]);
      expect(ls).toBeCloseTo(lw, 5);
    }
    expect(compare(Tensor.from(norms[1], [4]), norms[0], { abs: 1e-5, rel: 1e-5 }).ok, JSON.stringify(norms)).toBe(
      true,
    );
    const [pw, ps] = [await whole.parameters(), await split.parameters()];
    for (const [name, t] of pw)
      expect(compare(ps.get(name)! as Tensor, t as Tensor, { abs: 1e-5, rel: 1e-4 }).ok, name).toBe(true);
    expect(split.steps).toBe(4);
    expect(split.explain()).toMatch(/output\.weight\.grad\.acc\.next\s+grad-accumulate/);
    await whole.dispose();
    await split.dispose();
  });

  it("a step takes exactly n microbatches; a list without accumulate, or accumulate 0, is a typed error", async () => {
    const opts = { loss: "loss", optimizer: adam({ lr: 1e-2 }), executors: [createCpuExecutor()], weights };
    const t = rows(0, 2);
    const acc = await createTrainer(graph, { ...opts, accumulate: 3 });
    await expect(acc.step({ tokens: t, targets: t })).rejects.toThrow(
      /train\.step\.batch: with accumulate, a step takes one batch per micro step, expected a list of 3 batches, got one batch/,
    );
    await expect(acc.step([{ tokens: t, targets: t }])).rejects.toThrow(/got a list of 1/);
    const plain = await createTrainer(graph, opts);
    await expect(plain.step([{ tokens: t, targets: t }])).rejects.toThrow(
      /train\.step\.batch: a list of microbatches needs accumulate/,
    );
    await expect(createTrainer(graph, { ...opts, accumulate: 0 })).rejects.toThrow(
      /train\.accumulate: invalid number of microbatches, expected an integer >= 1, got 0/,
    );
    await acc.dispose();
    await plain.dispose();
  });

  it("a micro step that fails leaves the parameters as they were; the next step restarts the sum", async () => {
    const trainer = await trainerOf({ accumulate: 2 });
    const t = rows(0, 2);
    const bad = Tensor.int32(
      t.toInt32Array().map((v, i) => (i === 1 ? 99 : v)),
      t.shape,
    );
    const before = await trainer.parameters();
    await expect(
      trainer.step([
        { tokens: t, targets: t },
        { tokens: t, targets: bad },
      ]),
    ).rejects.toThrow(/target/);
    for (const [name, v] of await trainer.parameters()) expect(v.toArray(), name).toEqual(before.get(name)!.toArray());
    expect(trainer.steps).toBe(0);
    // The same step again gives what a fresh trainer's first step gives: the failed step's partial sum was not kept.
    const fresh = await trainerOf({ accumulate: 2 });
    const u = rows(2, 2);
    expect(
      await trainer.step([
        { tokens: t, targets: t },
        { tokens: u, targets: u },
      ]),
    ).toBe(
      await fresh.step([
        { tokens: t, targets: t },
        { tokens: u, targets: u },
      ]),
    );
    const [a, b] = [await trainer.parameters(), await fresh.parameters()];
    for (const [name, v] of a) expect(v.toArray(), name).toEqual(b.get(name)!.toArray());
    await trainer.dispose();
    await fresh.dispose();
  });
});
