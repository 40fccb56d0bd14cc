// SGD through the trainer: one plain step is exactly p − lr·∇ (the gradient from grad()'s own graph); momentum keeps
// a buffer on the executor and training still lowers the loss.
import { grad } from "@attngraph/autodiff";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { sgd } from "./optimizer.js";
import { createTrainer } from "./trainer.js";

const graph = simpleTransformer({ vocabSize: 6, embedDim: 8, nHeads: 2, seqLen: 4, mlpRatio: 2 }, { loss: true });
const weights = defaultInit(graph, 5);
const tokens = Tensor.int32([1, 2, 3, 4, 5, 0, 1, 2], [2, 4]);
const batch = { tokens, targets: tokens };

describe("sgd", () => {
  it("one plain step moves each parameter by exactly −lr times its gradient", async () => {
    const g = grad(graph, { loss: "loss", wrt: graph.weights.map((w) => w.name) });
    const s = await compile(g.graph, { executors: [createCpuExecutor()], weights });
    const grads = await s.run(batch);
    await s.dispose();
    const trainer = await createTrainer(graph, {
      loss: "loss",
      optimizer: sgd({ lr: 0.5 }),
      executors: [createCpuExecutor()],
      weights,
    });
    await trainer.step(batch);
    const after = await trainer.parameters();
    for (const w of graph.weights) {
      const p0 = weights[w.name]!.toArray();
      const gw = grads[`${w.name}.grad`]!.toArray();
      const p1 = after.get(w.name)!.toArray();
      p1.forEach((v, i) => expect(Math.abs(v - (p0[i]! - 0.5 * gw[i]!)), `${w.name}[${i}]`).toBeLessThan(1e-6));
    }
    await trainer.dispose();
  });

  it("with momentum (and Nesterov) the loss falls over a few steps; bad options name the field", async () => {
    for (const options of [
      { lr: 0.1, momentum: 0.9 },
      { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 1e-3 },
    ]) {
      const trainer = await createTrainer(graph, {
        loss: "loss",
        optimizer: sgd(options),
        executors: [createCpuExecutor()],
        weights,
      });
      const first = await trainer.step(batch);
      let last = first;
      for (let i = 0; i < 10; i++) last = await trainer.step(batch);
      expect(last, JSON.stringify(options)).toBeLessThan(first);
      expect(trainer.explain()).toMatch(/output\.weight\.sgd\.buf\.next\s+sgd-momentum/);
      await trainer.dispose();
    }
    expect(() => sgd({ lr: -1 })).toThrow(/sgd\.lr: invalid optimizer option/);
    expect(() => sgd({ lr: 0.1, nesterov: true })).toThrow(
      /sgd\.nesterov: invalid optimizer option, expected momentum > 0 and dampening 0/,
    );
    expect(() => sgd({ lr: 0.1, dampening: 2 })).toThrow(/sgd\.dampening/);
  });
});
