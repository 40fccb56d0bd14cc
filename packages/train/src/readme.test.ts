// The README's example, kept runnable: if this fails, fix the README too.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";
import { expect, it, vi } from "vitest";
import { adam, cosineSchedule, createTrainer, nanoGPTGroups, type StepEvent } from "./index.js";

it("runs the README example with the output it shows", async () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const graph = simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 }, { loss: true });
  const trainer = await createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: 1e-3 }),
    executors: [createCpuExecutor()],
    weights: defaultInit(graph, 3),
  });
  const tokens = Tensor.int32(
    Array.from({ length: 32 * 8 }, (_, i) => (i * 7 + (i >> 3)) % 10),
    [32, 8],
  );
  trainer.steps$.subscribe(({ step, loss }) => step % 25 === 0 && console.log(`step ${step}: loss ${loss.toFixed(2)}`));
  for (let i = 0; i < 50; i++) await trainer.step({ tokens, targets: tokens });
  const trained = await trainer.parameters();
  console.log(`${trained.size} parameters`);
  await trainer.dispose();
  const printed = log.mock.calls.map((c) => String(c[0]));
  log.mockRestore();
  expect(printed).toHaveLength(3);
  expect(printed[0]).toMatch(/^step 25: loss \d\.\d\d$/);
  expect(printed[1]).toMatch(/^step 50: loss \d\.\d\d$/);
  expect(Number(printed[1]!.split("loss ")[1])).toBeLessThan(Number(printed[0]!.split("loss ")[1]));
  expect(printed[2]).toBe("14 parameters");
}, 60_000);

it("runs the README's nanoGPT recipe (groups, clipping, schedule, accumulation) on a small model", async () => {
  const graph = simpleTransformer({ vocabSize: 10, embedDim: 16, nHeads: 2, seqLen: 8 }, { loss: true });
  const trainer = await createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: 6e-3, betas: [0.9, 0.95], eps: 1e-8, decoupled: true }),
    paramGroups: nanoGPTGroups(0.1),
    clipGradNorm: 1.0,
    schedule: cosineSchedule({ lr: 6e-3, minLr: 6e-4, warmup: 2, decaySteps: 8 }),
    accumulate: 4,
    executors: [createCpuExecutor()],
    weights: defaultInit(graph, 3),
  });
  const events: StepEvent[] = [];
  trainer.steps$.subscribe((e) => events.push(e));
  const micro = (k: number) => {
    const tokens = Tensor.int32(
      Array.from({ length: 4 * 8 }, (_, i) => ((k * 32 + i) * 7 + ((k * 32 + i) >> 3)) % 10),
      [4, 8],
    );
    return { tokens, targets: tokens };
  };
  for (let i = 0; i < 10; i++) await trainer.step([micro(0), micro(1), micro(2), micro(3)]);
  expect(events.map((e) => e.lr)).toEqual(
    Array.from({ length: 10 }, (_, i) => cosineSchedule({ lr: 6e-3, minLr: 6e-4, warmup: 2, decaySteps: 8 })(i)),
  );
  expect(events.every((e) => e.gradNorm! > 0)).toBe(true);
  expect(events[9]!.loss).toBeLessThan(events[0]!.loss);
  await trainer.dispose();
}, 60_000);
