// One training run of the copy task: a trainer (createTrainer + Adam) on the given executors, with the attention
// weights of the training graph tapped every step. What the controller drives: step(signal) → loss, then dispose().
import type { Executor } from "@attngraph/graph";
import type { Tensor } from "@attngraph/tensor";
import { adam, createTrainer } from "@attngraph/train";
import { copyTask, MASKED_NODE, WEIGHTS_NODE } from "./copy-task.js";
import type { TrainLoop } from "./train-controller.js";

/** The tapped tensors of the latest step: `weights` [B, H, T, T] and `masked` (same shape, −∞ where masked). */
export interface AttentionTaps {
  weights?: Tensor;
  masked?: Tensor;
}

export interface CopyTrainer extends TrainLoop {
  /** Filled by the taps while a step runs; read it after the step resolves. */
  readonly taps: AttentionTaps;
  /** The training step's plan (trainer.explain()). */
  explain(): string;
}

export async function createCopyTrainer(
  settings: { readonly lr: number; readonly seed: number },
  executors: readonly Executor[],
): Promise<CopyTrainer> {
  const task = copyTask(settings.seed);
  const trainer = await createTrainer(task.graph, {
    loss: "loss",
    optimizer: adam({ lr: settings.lr }),
    executors,
    weights: task.weights,
  });
  const taps: AttentionTaps = {};
  // The trainer's session runs forward, backward and Adam as one run; a tap reads a forward node back each step.
  const sub = trainer.session.tap([WEIGHTS_NODE, MASKED_NODE]).subscribe((e) => {
    if (e.node === WEIGHTS_NODE) taps.weights = e.tensor;
    else taps.masked = e.tensor;
  });
  return {
    taps,
    step: (signal) => trainer.step(task.batch, { signal }),
    explain: () => trainer.explain(),
    dispose: async () => {
      sub.unsubscribe();
      await trainer.dispose();
    },
  };
}
