// A Llama model loaded from a Hugging Face LlamaForCausalLM checkpoint: the graphs it runs as (forward, forward with
// loss, decode) built on first use and compiled once, and the weights under the file's own names (the graph uses them
// as they are, so stateDict() is the file's layout). Generation runs on a KV-cache decoder as GptModel's does.
import type { Tensor } from "@attngraph/tensor";
import { CausalLm, type ModelCompileOptions } from "./causal-lm.js";
import type { LlamaConfig } from "./llama-config.js";
import { LLAMA_IGNORE_INDEX, llamaGraph } from "./llama.js";

export class LlamaModel extends CausalLm<LlamaConfig> {
  readonly family = "llama" as const;

  constructor(config: LlamaConfig, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    super(config, weights, options, {
      graph: llamaGraph,
      ignoreIndex: LLAMA_IGNORE_INDEX,
      context: { length: config.maxPositions, name: "max_position_embeddings" },
    });
  }

  /** What the loader found, in words. */
  get description(): string {
    const c = this.config;
    return `Llama (Hugging Face LlamaForCausalLM names): ${c.numLayers} layer${c.numLayers === 1 ? "" : "s"}, ${c.numHeads} heads, ${c.numKvHeads} key/value heads, hidden ${c.hiddenSize}, intermediate ${c.intermediateSize}, vocab ${c.vocabSize}, max positions ${c.maxPositions}, rope_theta ${c.ropeTheta}, lm_head ${c.tied ? "tied to embed_tokens" : "its own"}`;
  }
}
