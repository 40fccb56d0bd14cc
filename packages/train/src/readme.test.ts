// The README's example, kept runnable: if this fails, fix the README too.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";
import { expect, it, vi } from "vitest";
import { adam, createTrainer } from "./index.js";

it("runs the README example with the output it shows", async () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const graph = simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 }, { loss: true });
  const trainer = await createTrainer(graph, { loss: "loss", optimizer: adam({ lr: 1e-3 }), executors: [createCpuExecutor()], weights: defaultInit(graph, 3) });
  const tokens = Tensor.int32(Array.from({ length: 32 * 8 }, (_, i) => (i * 7 + (i >> 3)) % 10), [32, 8]);
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
