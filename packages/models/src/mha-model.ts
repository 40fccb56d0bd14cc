// A torch.nn.MultiheadAttention loaded from its state_dict: run({ query, key, value, … }) as the module's forward,
// with PyTorch's mask conventions (torch-masks.ts) and its outputs (attn_output, attn_output_weights). One graph per
// combination of self-attention / masks / is_causal / need_weights a caller uses, compiled on first use.
import type { OpGraph } from "@attngraph/graph";
import type { RunOptions } from "@attngraph/runtime";
import type { AnyTensor } from "@attngraph/tensor";
import { LoadedModel } from "./loaded-model.js";
import type { MhaConfig } from "./mha-config.js";
import { mhaGraph, type MhaGraphOptions } from "./mha.js";
import { meanOverHeads, mhaFeed, type MhaInputs, type MhaOutputs } from "./mha-inputs.js";

export class MhaModel extends LoadedModel<MhaConfig, MhaGraphOptions> {
  readonly family = "torch-mha" as const;

  /** One graph per combination of self-attention / masks / is_causal / need_weights. */
  protected buildGraph(options: MhaGraphOptions): OpGraph {
    return mhaGraph(this.config, options);
  }

  protected graphKey(o: MhaGraphOptions): string {
    return [
      o.selfAttention ? "self" : "-",
      o.mask ?? "-",
      o.keyPadding ? "pad" : "-",
      o.causal ? "causal" : "-",
      o.needWeights ? "w" : "-",
    ].join("/");
  }

  get description(): string {
    const c = this.config;
    const py = (v: boolean) => (v ? "True" : "False");
    return `torch.nn.MultiheadAttention(embed_dim=${c.embedDim}, num_heads=${c.numHeads}, bias=${py(c.bias)}, kdim=${c.kdim}, vdim=${c.vdim}, batch_first=${py(c.batchFirst)})`;
  }

  /**
   * The graph a forward call runs and its inputs, PyTorch's masks turned into attngraph's, every shape checked before
   * anything runs: what run() feeds, and what a tool (a diff, an export) takes.
   */
  prepare(inputs: MhaInputs): { graph: OpGraph; inputs: Record<string, AnyTensor>; options: MhaGraphOptions } {
    const { options, feed } = mhaFeed(this.config, inputs);
    return { graph: this.graph(options), inputs: feed, options };
  }

  /** The module's forward: `attn_output` shaped like query and `attn_output_weights` (see MhaInputs). */
  async run(inputs: MhaInputs, options: RunOptions = {}): Promise<MhaOutputs> {
    const { graph, inputs: feed } = this.prepare(inputs);
    const out = await (await this.sessionOf(graph)).run(feed, options);
    const perHead = out["attn_output_weights"];
    // attngraph has no mean-over-an-axis op: the graph gives the weights per head and the average (PyTorch's default
    // average_attn_weights=True) is taken here, one pass over [B, H, L, S] on the host.
    const weights =
      perHead === undefined ? null : inputs.average_attn_weights === false ? perHead : meanOverHeads(perHead);
    return { attn_output: out["attn_output"]!, attn_output_weights: weights };
  }
}
