// A torch.nn.MultiheadAttention loaded from its state_dict: run({ query, key, value, … }) as the module's forward,
// with PyTorch's mask conventions (torch-masks.ts) and its outputs (attn_output, attn_output_weights). One graph per
// combination of self-attention / masks / is_causal / need_weights a caller uses, compiled on first use.
import type { OpGraph } from "@attngraph/graph";
import { compile, type RunOptions, type Session } from "@attngraph/runtime";
import type { AnyTensor, Tensor } from "@attngraph/tensor";
import { compileOptionsOf, type ModelCompileOptions } from "./causal-lm.js";
import type { MhaConfig } from "./mha-config.js";
import { mhaGraph, type MhaGraphOptions } from "./mha.js";
import { meanOverHeads, mhaFeed, type MhaInputs, type MhaOutputs } from "./mha-inputs.js";

export class MhaModel {
  readonly family = "torch-mha" as const;
  readonly config: MhaConfig;
  #weights: Record<string, Tensor>;
  readonly #options: ModelCompileOptions;
  readonly #sessions = new Map<OpGraph, Promise<Session>>();
  readonly #graphs = new Map<string, OpGraph>();

  constructor(config: MhaConfig, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    this.config = config;
    this.#weights = weights;
    this.#options = options;
  }

  get description(): string {
    const c = this.config;
    const py = (v: boolean) => (v ? "True" : "False");
    return `torch.nn.MultiheadAttention(embed_dim=${c.embedDim}, num_heads=${c.numHeads}, bias=${py(c.bias)}, kdim=${c.kdim}, vdim=${c.vdim}, batch_first=${py(c.batchFirst)})`;
  }

  get weights(): Readonly<Record<string, Tensor>> {
    return this.#weights;
  }

  /** The module's graph for one combination of options (built once). */
  graph(options: MhaGraphOptions = {}): OpGraph {
    const o = options;
    const key = [o.selfAttention ? "self" : "-", o.mask ?? "-", o.keyPadding ? "pad" : "-", o.causal ? "causal" : "-", o.needWeights ? "w" : "-"].join("/");
    let g = this.#graphs.get(key);
    if (!g) this.#graphs.set(key, (g = mhaGraph(this.config, o)));
    return g;
  }

  /** The compiled session for one combination of options: tap `weights` [B, H, L, S] and the rest. */
  session(options: MhaGraphOptions = {}): Promise<Session> {
    return this.sessionOf(this.graph(options));
  }

  /** The compiled session of one of this model's graphs (prepare()'s): compiled on first use, then kept. */
  sessionOf(graph: OpGraph): Promise<Session> {
    let s = this.#sessions.get(graph);
    if (!s) {
      s = compile(graph, { ...compileOptionsOf(this.#options, "running the model"), weights: this.#weights });
      this.#sessions.set(graph, s);
      s.catch(() => this.#sessions.delete(graph)); // a failed compile is not kept: the next call tries again
    }
    return s;
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
    const { graph, inputs: feed, options: o } = this.prepare(inputs);
    const out = await (await this.sessionOf(graph)).run(feed, options);
    const perHead = out["attn_output_weights"];
    // attngraph has no mean-over-an-axis op: the graph gives the weights per head and the average (PyTorch's default
    // average_attn_weights=True) is taken here, one pass over [B, H, L, S] on the host.
    const weights = perHead === undefined ? null : inputs.average_attn_weights === false ? perHead : meanOverHeads(perHead);
    return { attn_output: out["attn_output"]!, attn_output_weights: weights };
  }

  /** The weights as the module's state_dict (its own names), ready for writeSafetensors. */
  stateDict(): Map<string, Tensor> {
    return new Map(Object.entries(this.#weights));
  }

  async dispose(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map(async (s) => (await s.catch(() => undefined))?.dispose()));
  }
}
