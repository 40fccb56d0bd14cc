// Training a GPT-2-family model the way nanoGPT's train.py does: AdamW from configure_optimizers (decoupled weight
// decay on the parameters of rank >= 2, none on biases and norms), betas (0.9, 0.95), clip_grad_norm_ before each
// update (on the executor), and optionally its warmup + cosine learning rate. The trainer is @attngraph/train's, on the
// model's graph with its loss; each step takes { idx, targets } as model.run does.
import type { Executor } from "@attngraph/graph";
import { adam, createTrainer, nanoGPTGroups, type LrSchedule, type Trainer } from "@attngraph/train";
import type { GptModel } from "./gpt-model.js";

export interface GptTrainerOptions {
  /** AdamW's learning rate (nanoGPT: 6e-4). */
  readonly lr: number;
  readonly betas?: readonly [number, number];
  readonly eps?: number;
  /** Decoupled weight decay of the rank >= 2 parameters (nanoGPT: 0.1); the others get none. */
  readonly weightDecay?: number;
  /** Global gradient-norm clipping before each update (nanoGPT: 1.0); 0 turns it off. */
  readonly clipGradNorm?: number;
  /** The learning rate per iteration, e.g. cosineSchedule({ lr, minLr, warmup, decaySteps }). */
  readonly schedule?: LrSchedule;
  /** Executors of the training session (default: the model's). */
  readonly executors?: readonly Executor[];
}

/** A trainer of `model` from its current weights; `model.setWeights(await trainer.parameters())` takes them back. */
export function gptTrainer(
  model: GptModel,
  executors: readonly Executor[],
  options: GptTrainerOptions,
): Promise<Trainer> {
  const clip = options.clipGradNorm ?? 1.0;
  return createTrainer(model.graph({ loss: true }), {
    loss: "loss",
    optimizer: adam({ lr: options.lr, betas: options.betas ?? [0.9, 0.95], eps: options.eps ?? 1e-8, decoupled: true }),
    paramGroups: nanoGPTGroups(options.weightDecay ?? 0.1),
    ...(clip > 0 ? { clipGradNorm: clip } : {}),
    ...(options.schedule ? { schedule: options.schedule } : {}),
    executors: options.executors ?? executors,
    weights: model.weights,
  });
}
