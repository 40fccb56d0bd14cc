// A Llama model loaded from a Hugging Face LlamaForCausalLM checkpoint: the graphs it runs as (forward, forward with
// loss, decode) built on first use and compiled once, and the weights under the file's own names (the graph uses them
// as they are, so stateDict() is the file's layout). Generation runs on a KV-cache decoder as GptModel's does.
import type { OpGraph } from "@attngraph/graph";
import { compile, compileDecoder, type Decoder, type RunOptions, type Session } from "@attngraph/runtime";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { defer, from, switchMap, type Observable } from "rxjs";
import { generate, generateTokens, type TokenEvent } from "./generate.js";
import type { GenerateOptions } from "./generate-options.js";
import type { Prompt } from "./generate-prompt.js";
import { compileOptionsOf, type ModelCompileOptions } from "./gpt-model.js";
import type { LlamaConfig } from "./llama-config.js";
import { llamaGraph } from "./llama.js";
import { ModelInputError, tokenIds } from "./token-ids.js";

export class LlamaModel {
  readonly family = "llama" as const;
  readonly config: LlamaConfig;
  #weights: Record<string, Tensor>;
  readonly #options: ModelCompileOptions;
  readonly #graphs = new Map<string, OpGraph>();
  readonly #sessions = new Map<OpGraph, Promise<Session>>();
  /** generate()'s decoders by batch size. */
  readonly #decoders = new Map<number, Promise<Decoder>>();

  constructor(config: LlamaConfig, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    this.config = config;
    this.#weights = weights;
    this.#options = options;
  }

  /** What the loader found, in words. */
  get description(): string {
    const c = this.config;
    return `Llama (Hugging Face LlamaForCausalLM names): ${c.numLayers} layer${c.numLayers === 1 ? "" : "s"}, ${c.numHeads} heads, ${c.numKvHeads} key/value heads, hidden ${c.hiddenSize}, intermediate ${c.intermediateSize}, vocab ${c.vocabSize}, max positions ${c.maxPositions}, rope_theta ${c.ropeTheta}, lm_head ${c.tied ? "tied to embed_tokens" : "its own"}`;
  }

  /** The weights by the graph's (and the checkpoint's) names. */
  get weights(): Readonly<Record<string, Tensor>> {
    return this.#weights;
  }

  /** The graph: `idx` → `logits`; with loss, also `targets` → `loss`; decode, the KV-cache decoder's. */
  graph(options: { readonly loss?: boolean; readonly decode?: boolean } = {}): OpGraph {
    const key = `${options.loss ? "loss" : ""}${options.decode ? "decode" : ""}`;
    let g = this.#graphs.get(key);
    if (!g) this.#graphs.set(key, (g = llamaGraph(this.config, options)));
    return g;
  }

  /** The compiled forward session (with `targets` and `loss` when asked). Compiled once. */
  session(options: { readonly loss?: boolean } = {}): Promise<Session> {
    return this.sessionOf(this.graph(options));
  }

  /** The compiled session of one of this model's graphs: compiled on first use, then kept. */
  sessionOf(graph: OpGraph): Promise<Session> {
    let s = this.#sessions.get(graph);
    if (!s) {
      s = compile(graph, { ...compileOptionsOf(this.#options, "running the model"), weights: this.#weights });
      this.#sessions.set(graph, s);
      s.catch(() => this.#sessions.delete(graph)); // a failed compile is not kept: the next call tries again
    }
    return s;
  }

  /** The graph a forward call runs and its inputs, checked (ids in the vocabulary, T within max positions). */
  prepare(inputs: { readonly idx: unknown; readonly targets?: unknown }): { graph: OpGraph; inputs: Record<string, AnyTensor>; loss: boolean } {
    if (typeof inputs !== "object" || inputs === null) throw new ModelInputError("inputs", "not an inputs object", "{ idx, targets? }", String(inputs));
    const idx = tokenIds("idx", inputs.idx, this.config.vocabSize, this.config.maxPositions);
    const loss = inputs.targets !== undefined;
    const feed: Record<string, AnyTensor> = { idx };
    if (loss) {
      const targets = tokenIds("targets", inputs.targets, this.config.vocabSize, this.config.maxPositions);
      if (targets.shape[0] !== idx.shape[0] || targets.shape[1] !== idx.shape[1]) throw new ModelInputError("targets", "targets must be shaped like idx", `[${idx.shape.join(", ")}]`, `[${targets.shape.join(", ")}]`);
      feed["targets"] = targets;
    }
    return { graph: this.graph({ loss }), inputs: feed, loss };
  }

  /** Logits [B, T, vocab] of token ids [B, T], and with `targets` the mean cross-entropy `loss`. */
  run(inputs: { readonly idx: unknown; readonly targets: unknown }, options?: RunOptions): Promise<{ logits: Tensor; loss: Tensor }>;
  run(inputs: { readonly idx: unknown; readonly targets?: undefined }, options?: RunOptions): Promise<{ logits: Tensor; loss?: Tensor }>;
  async run(inputs: { readonly idx: unknown; readonly targets?: unknown }, options: RunOptions = {}): Promise<{ logits: Tensor; loss?: Tensor }> {
    const { inputs: feed, loss } = this.prepare(inputs);
    const out = await (await this.session({ loss })).run(feed, options);
    return loss ? { logits: out["logits"]!, loss: out["loss"]! } : { logits: out["logits"]! };
  }

  /** A KV-cache decoder of this model (maxLength: max_position_embeddings by default). */
  decoder(options: { readonly maxLength?: number; readonly batch?: number } = {}): Promise<Decoder> {
    const maxLength = options.maxLength ?? this.config.maxPositions;
    if (!Number.isSafeInteger(maxLength) || maxLength < 1 || maxLength > this.config.maxPositions) throw new ModelInputError("decoder maxLength", "the cache cannot hold more positions than the model has", `an integer in 1..${this.config.maxPositions} (max_position_embeddings)`, String(options.maxLength));
    return compileDecoder(this.graph({ decode: true }), { ...compileOptionsOf(this.#options, "a decoder"), weights: this.#weights, maxLength, ...(options.batch === undefined ? {} : { batch: options.batch }) });
  }

  /** Generates after `prompt` on this model's KV-cache decoder (one per batch size): generate()'s events. */
  generate(prompt: Prompt, options: GenerateOptions): Observable<TokenEvent> {
    return defer(() => from(this.#decoderFor(prompt))).pipe(switchMap((d) => generate(d, prompt, options)));
  }

  /** The prompt and its new tokens, one array per row. */
  async generateTokens(prompt: Prompt, options: GenerateOptions): Promise<number[][]> {
    return generateTokens(await this.#decoderFor(prompt), prompt, options);
  }

  #decoderFor(prompt: Prompt): Promise<Decoder> {
    const batch = Tensor.isTensor(prompt) ? prompt.shape[0]! : Array.isArray(prompt) && Array.isArray(prompt[0]) ? prompt.length : 1;
    let d = this.#decoders.get(batch);
    if (!d) {
      d = this.decoder({ batch });
      this.#decoders.set(batch, d);
      d.catch(() => this.#decoders.delete(batch));
    }
    return d;
  }

  /** The weights as LlamaForCausalLM's state_dict (the graph's names are its names), ready for writeSafetensors. */
  stateDict(): Map<string, Tensor> {
    return new Map(Object.entries(this.#weights));
  }

  async dispose(): Promise<void> {
    const sessions: Promise<{ dispose(): Promise<void> }>[] = [...this.#sessions.values(), ...this.#decoders.values()];
    this.#sessions.clear();
    this.#decoders.clear();
    await Promise.all(sessions.map(async (s) => (await s.catch(() => undefined))?.dispose()));
  }
}
