// The training steps of a golden-models case, as nanoGPT's train.py takes them: AdamW from configure_optimizers
// (decoupled weight decay on parameters of rank >= 2, none on the others), clip_grad_norm_ over all parameters before
// each update, one step per batch from the weights in the file. The loss of each step (before its update) is compared
// with PyTorch's; clipping and the update run on the executor, with no parameter or gradient round trip to the host.
import type { Executor } from "@attngraph/graph";
import type { GptModel } from "@attngraph/models";
import { Tensor, compare } from "@attngraph/tensor";
import type { ModelCase } from "@attngraph/testkit";
import { adam, createTrainer, nanoGPTGroups } from "@attngraph/train";
import type { TensorCheck } from "./run-case.js";

export async function trainingCheck(
  model: GptModel,
  c: ModelCase,
  executors: readonly Executor[],
): Promise<TensorCheck[]> {
  const t = c.train!;
  const graph = model.graph({ loss: true });
  const trainer = await createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: t.lr, betas: t.betas, eps: t.eps, decoupled: true }),
    paramGroups: nanoGPTGroups(t.weightDecay),
    ...(t.gradClip === undefined ? {} : { clipGradNorm: t.gradClip }),
    executors,
    weights: model.weights,
  });
  const [steps, B, T1] = t.batches.shape as [number, number, number];
  const all = t.batches.toInt32Array();
  const losses: number[] = [];
  try {
    for (let s = 0; s < steps; s++) {
      const idx = new Int32Array(B * (T1 - 1));
      const targets = new Int32Array(B * (T1 - 1));
      for (let b = 0; b < B; b++) {
        const row = all.subarray((s * B + b) * T1, (s * B + b + 1) * T1);
        idx.set(row.subarray(0, T1 - 1), b * (T1 - 1));
        targets.set(row.subarray(1), b * (T1 - 1));
      }
      // The model's own checks (ids in the vocabulary, T within the block size) before the step runs.
      const feed = model.prepare({
        idx: Tensor.int32(idx, [B, T1 - 1]),
        targets: Tensor.int32(targets, [B, T1 - 1]),
      }).inputs;
      losses.push(await trainer.step(feed));
    }
  } finally {
    await trainer.dispose();
  }
  const r = compare(Float32Array.from(losses), Float32Array.from(t.losses), c.tolerance);
  return [
    {
      name: `training losses (${steps} AdamW steps${t.gradClip === undefined ? "" : ", clipped"})`,
      ok: r.ok,
      failures: r.failures,
      size: steps,
      worst: r.worst,
    },
  ];
}
