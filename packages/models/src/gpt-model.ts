// A GPT-2-family model loaded from its checkpoint (nanoGPT's or Hugging Face's layout): the weights by nanoGPT's
// names, the trainer nanoGPT users expect, and the way back to the file's own layout. Running, generating and new
// weights are every causal LM's (causal-lm.ts).
import type { Tensor } from "@attngraph/tensor";
import type { Trainer } from "@attngraph/train";
import { CausalLm, compileOptionsOf, type ModelCompileOptions } from "./causal-lm.js";
import type { GptConfig } from "./gpt-config.js";
import { gptStateDict, type GptLayout } from "./gpt-layout.js";
import { gptTrainer, type GptTrainerOptions } from "./gpt-trainer.js";
import { GPT_IGNORE_INDEX, gptGraph } from "./gpt.js";

export class GptModel extends CausalLm<GptConfig> {
  readonly family = "gpt2" as const;
  readonly layout: GptLayout;

  constructor(config: GptConfig, layout: GptLayout, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    super(config, weights, options, {
      graph: gptGraph,
      ignoreIndex: GPT_IGNORE_INDEX,
      context: { length: config.blockSize, name: "block size" },
    });
    this.layout = layout;
  }

  /** What the loader found, in words: the family, layout and sizes. */
  get description(): string {
    const c = this.config;
    return `GPT-2 family, ${this.layout.description}: ${c.nLayer} layer${c.nLayer === 1 ? "" : "s"}, ${c.nHead} heads, n_embd ${c.nEmbd}, vocab ${c.vocabSize}, block ${c.blockSize}, ${c.bias ? "biases" : "no biases"}, ${c.gelu === "tanh" ? "tanh GELU" : "exact GELU"}, lm_head ${c.tied ? "tied to wte" : "its own"}`;
  }

  /**
   * A trainer of this model as nanoGPT trains: AdamW with its parameter groups, betas (0.9, 0.95), clipping at 1.0 on
   * the executor (options change any of it). Each `trainer.step({ idx, targets })` is one update; read the result back
   * with `model.setWeights(await trainer.parameters())`.
   */
  trainer(options: GptTrainerOptions): Promise<Trainer> {
    return gptTrainer(this, compileOptionsOf(this.options, "a trainer").executors, options);
  }

  /** The weights as the family's own state_dict (the loaded file's names and layout), ready for writeSafetensors. */
  override stateDict(): Map<string, Tensor> {
    return gptStateDict(this.graph(), this.weights, this.layout);
  }
}
