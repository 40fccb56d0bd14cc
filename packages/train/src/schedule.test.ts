// cosineSchedule is nanoGPT's get_lr, and a schedule reaches adam-step as its lrScale input (a rate the trainer feeds
// each step, the graph unchanged). The schedule's numbers against PyTorch are in groups-clip.test.ts.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { adam, sgd } from "./optimizer.js";
import { cosineSchedule } from "./schedule.js";
import { createTrainer, type StepEvent } from "./trainer.js";

/** nanoGPT's train.py get_lr, transcribed. */
function getLr(it: number, lr: number, minLr: number, warmup: number, decay: number): number {
  if (it < warmup) return (lr * (it + 1)) / (warmup + 1);
  if (it > decay) return minLr;
  const ratio = (it - warmup) / (decay - warmup);
  return minLr + 0.5 * (1 + Math.cos(Math.PI * ratio)) * (lr - minLr);
}

describe("cosineSchedule", () => {
  it("is nanoGPT's get_lr: linear warmup, cosine decay to minLr at decaySteps, minLr after", () => {
    const s = cosineSchedule({ lr: 6e-4, minLr: 6e-5, warmup: 20, decaySteps: 600 });
    for (const it of [0, 1, 19, 20, 21, 300, 599, 600, 601, 10_000]) expect(s(it)).toBe(getLr(it, 6e-4, 6e-5, 20, 600));
    expect(s(20)).toBe(6e-4);
    expect(s(600)).toBeCloseTo(6e-5, 15);
    const flat = cosineSchedule({ lr: 1e-3, minLr: 1e-4, warmup: 0, decaySteps: 0 });
    expect([flat(0), flat(1)]).toEqual([1e-3, 1e-4]);
  });

  it("bad options are typed errors naming the field", () => {
    expect(() => cosineSchedule({ lr: 0, minLr: 0, warmup: 0, decaySteps: 1 })).toThrow(
      /cosineSchedule\.lr: invalid schedule option, expected a finite number > 0, got 0/,
    );
    expect(() => cosineSchedule({ lr: 1e-3, minLr: 1e-2, warmup: 0, decaySteps: 1 })).toThrow(/cosineSchedule\.minLr/);
    expect(() => cosineSchedule({ lr: 1e-3, minLr: 0, warmup: 1.5, decaySteps: 4 })).toThrow(/cosineSchedule\.warmup/);
    expect(() => cosineSchedule({ lr: 1e-3, minLr: 0, warmup: 5, decaySteps: 4 })).toThrow(
      /cosineSchedule\.decaySteps: invalid schedule option, expected an integer >= warmup \(5\), got 4/,
    );
  });
});

describe("a schedule in the trainer", () => {
  const graph = simpleTransformer({ vocabSize: 5, embedDim: 4, nHeads: 1, seqLen: 3 }, { loss: true });
  const tokens = Tensor.int32([1, 2, 3, 4, 0, 1], [2, 3]);

  it("feeds lr / the optimizer's lr as adam-step's lrScale each step: a rate of 0 changes no parameter; events carry lr", async () => {
    const rates = [0, 1e-2, 0];
    const trainer = await createTrainer(graph, {
      loss: "loss",
      optimizer: adam({ lr: 1e-2, weightDecay: 0.5, decoupled: true }),
      schedule: (i) => rates[i]!,
      executors: [createCpuExecutor()],
      weights: defaultInit(graph, 1),
    });
    expect(trainer.training.graph.nodes.find((n) => n.name === "output.weight.next")!.inputs).toMatchObject({
      lrScale: "train.lrScale",
    });
    const events: StepEvent[] = [];
    trainer.steps$.subscribe((e) => events.push(e));
    const p0 = await trainer.parameters();
    await trainer.step({ tokens, targets: tokens });
    const p1 = await trainer.parameters();
    for (const [name, t] of p0) expect(p1.get(name)!.toArray(), name).toEqual(t.toArray());
    await trainer.step({ tokens, targets: tokens });
    expect((await trainer.parameters()).get("output.weight")!.toArray()).not.toEqual(
      p0.get("output.weight")!.toArray(),
    );
    expect(events.map((e) => e.lr)).toEqual([0, 1e-2]);
    await trainer.dispose();
  });

  it("a rate that is NaN or negative fails the step before it runs, naming train.schedule; the next step goes on", async () => {
    const rates = [Number.NaN, -1, 1e-3];
    const trainer = await createTrainer(graph, {
      loss: "loss",
      optimizer: adam({ lr: 1e-3 }),
      schedule: () => rates.shift()!,
      executors: [createCpuExecutor()],
      weights: defaultInit(graph, 1),
    });
    await expect(trainer.step({ tokens, targets: tokens })).rejects.toThrow(
      /train\.schedule: invalid learning rate at iteration 0, expected a finite number >= 0, got NaN/,
    );
    await expect(trainer.step({ tokens, targets: tokens })).rejects.toThrow(/got -1/);
    expect(trainer.steps).toBe(0);
    expect(await trainer.step({ tokens, targets: tokens })).toBeGreaterThan(0);
    await trainer.dispose();
  });

  it("sgd follows a schedule too (sgd-step's lrScale): a rate of 0 changes nothing; a non-function is a typed error", async () => {
    const opts = { loss: "loss", executors: [createCpuExecutor()], weights: defaultInit(graph, 1) };
    const trainer = await createTrainer(graph, {
      ...opts,
      optimizer: sgd({ lr: 0.1, momentum: 0.9 }),
      schedule: (i) => (i === 0 ? 0 : 0.1),
    });
    const p0 = await trainer.parameters();
    await trainer.step({ tokens, targets: tokens });
    for (const [name, t] of await trainer.parameters()) expect(t.toArray(), name).toEqual(p0.get(name)!.toArray());
    await trainer.step({ tokens, targets: tokens });
    expect((await trainer.parameters()).get("output.weight")!.toArray()).not.toEqual(
      p0.get("output.weight")!.toArray(),
    );
    await trainer.dispose();
    await expect(
      createTrainer(graph, { ...opts, optimizer: adam({ lr: 0.1 }), schedule: 0.1 as unknown as () => number }),
    ).rejects.toThrow(/train\.schedule: invalid learning-rate schedule/);
  });
});
