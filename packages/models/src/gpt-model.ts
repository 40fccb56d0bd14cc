// A GPT-2-family model loaded from its checkpoint: the graphs it runs as (forward, forward with loss, decode) built
// on first use and compiled once, the weights by nanoGPT's names, and the way back to the file's own layout.
import type { OpGraph } from "@attngraph/graph";
import { compile, compileDecoder, type CompileOptions, type Decoder, type RunOptions, type Session } from "@attngraph/runtime";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import type { Trainer } from "@attngraph/train";
import { defer, from, switchMap, type Observable } from "rxjs";
import { generate, generateTokens, type TokenEvent } from "./generate.js";
import type { GenerateOptions } from "./generate-options.js";
import type { Prompt } from "./generate-prompt.js";
import { gptTrainer, type GptTrainerOptions } from "./gpt-trainer.js";
import { ModelConfigError } from "./config-fields.js";
import type { GptConfig } from "./gpt-config.js";
import { gptStateDict, type GptLayout } from "./gpt-layout.js";
import { gptGraph } from "./gpt.js";
import { ModelInputError, tokenIds } from "./token-ids.js";

/**
 * How a model's sessions compile: compile()'s options but the weights (the model's) and updates (a trainer's).
 * Executors may be left out for host-only use (graph(), prepare(), stateDict()); running then says they are needed.
 */
export type ModelCompileOptions = Omit<CompileOptions, "weights" | "updates" | "executors"> & { readonly executors?: CompileOptions["executors"] };

/** The options compile() needs, or a ModelConfigError when the model was loaded without executors. */
export function compileOptionsOf(options: ModelCompileOptions, what: string): Omit<CompileOptions, "weights"> {
  if (!options.executors || options.executors.length === 0) throw new ModelConfigError("options.executors", `${what} needs executors: loadModel(…, { executors: [createCpuExecutor()] })`, "one or more executors", "none");
  return options as Omit<CompileOptions, "weights">;
}

export class GptModel {
  readonly family = "gpt2" as const;
  readonly config: GptConfig;
  readonly layout: GptLayout;
  #weights: Record<string, Tensor>;
  readonly #options: ModelCompileOptions;
  readonly #graphs = new Map<string, OpGraph>();
  readonly #sessions = new Map<OpGraph, Promise<Session>>();
  /** generate()'s decoders by batch size. */
  readonly #decoders = new Map<number, Promise<Decoder>>();

  constructor(config: GptConfig, layout: GptLayout, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    this.config = config;
    this.layout = layout;
    this.#weights = weights;
    this.#options = options;
  }

  /** What the loader found, in words: the family, layout and sizes. */
  get description(): string {
    const c = this.config;
    return `GPT-2 family, ${this.layout.description}: ${c.nLayer} layer${c.nLayer === 1 ? "" : "s"}, ${c.nHead} heads, n_embd ${c.nEmbd}, vocab ${c.vocabSize}, block ${c.blockSize}, ${c.bias ? "biases" : "no biases"}, ${c.gelu === "tanh" ? "tanh GELU" : "exact GELU"}, lm_head ${c.tied ? "tied to wte" : "its own"}`;
  }

  /** The weights by the graph's (nanoGPT's) names. */
  get weights(): Readonly<Record<string, Tensor>> {
    return this.#weights;
  }

  /** The graph: `idx` → `logits`; with loss, also `targets` → `loss`; decode, the KV-cache decoder's. */
  graph(options: { readonly loss?: boolean; readonly decode?: boolean } = {}): OpGraph {
    const key = `${options.loss ? "loss" : ""}${options.decode ? "decode" : ""}`;
    let g = this.#graphs.get(key);
    if (!g) this.#graphs.set(key, (g = gptGraph(this.config, options)));
    return g;
  }

  /** The compiled forward session (with `targets` and `loss` when asked): tap any node of it. Compiled once. */
  session(options: { readonly loss?: boolean } = {}): Promise<Session> {
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
   * The graph a forward call runs and its inputs, checked (ids in the vocabulary, T within the block size, targets
   * shaped like idx) before anything runs: what run() feeds, and what a tool (a per-node diff, an export) takes.
   */
  prepare(inputs: { readonly idx: unknown; readonly targets?: unknown }): { graph: OpGraph; inputs: Record<string, AnyTensor>; loss: boolean } {
    if (typeof inputs !== "object" || inputs === null) throw new ModelInputError("inputs", "not an inputs object", "{ idx, targets? }", String(inputs));
    const idx = tokenIds("idx", inputs.idx, this.config.vocabSize, this.config.blockSize);
    const loss = inputs.targets !== undefined;
    const feed: Record<string, AnyTensor> = { idx };
    if (loss) {
      const targets = tokenIds("targets", inputs.targets, this.config.vocabSize, this.config.blockSize);
      if (targets.shape[0] !== idx.shape[0] || targets.shape[1] !== idx.shape[1]) throw new ModelInputError("targets", "targets must be shaped like idx", `[${idx.shape.join(", ")}]`, `[${targets.shape.join(", ")}]`);
      feed["targets"] = targets;
    }
    return { graph: this.graph({ loss }), inputs: feed, loss };
  }

  /**
   * Logits [B, T, vocab] of token ids [B, T] (an int32 Tensor or nested arrays), and with `targets` the mean
   * cross-entropy `loss` (nanoGPT's forward(idx, targets)). Ids are checked before anything runs.
   */
  run(inputs: { readonly idx: unknown; readonly targets: unknown }, options?: RunOptions): Promise<{ logits: Tensor; loss: Tensor }>;
  run(inputs: { readonly idx: unknown; readonly targets?: undefined }, options?: RunOptions): Promise<{ logits: Tensor; loss?: Tensor }>;
  async run(inputs: { readonly idx: unknown; readonly targets?: unknown }, options: RunOptions = {}): Promise<{ logits: Tensor; loss?: Tensor }> {
    const { inputs: feed, loss } = this.prepare(inputs);
    const out = await (await this.session({ loss })).run(feed, options);
    return loss ? { logits: out["logits"]!, loss: out["loss"]! } : { logits: out["logits"]! };
  }

  /** A KV-cache decoder of this model (maxLength: the block size by default), loaded from the same weights. */
  decoder(options: { readonly maxLength?: number; readonly batch?: number } = {}): Promise<Decoder> {
    const maxLength = options.maxLength ?? this.config.blockSize;
    if (!Number.isSafeInteger(maxLength) || maxLength < 1 || maxLength > this.config.blockSize) throw new ModelInputError("decoder maxLength", "the cache cannot hold more positions than the model has", `an integer in 1..${this.config.blockSize} (block size)`, String(options.maxLength));
    return compileDecoder(this.graph({ decode: true }), { ...compileOptionsOf(this.#options, "a decoder"), weights: this.#weights, maxLength, ...(options.batch === undefined ? {} : { batch: options.batch }) });
  }

  /**
   * Generates after `prompt` (ids, rows of ids, an int32 [B, P] tensor, or text with `options.tokenizer`) on this
   * model's KV-cache decoder (one per batch size, made on first use): generate()'s events, one per new token.
   * Positions past the block size crop the context as nanoGPT does.
   */
  generate(prompt: Prompt, options: GenerateOptions): Observable<TokenEvent> {
    return defer(() => from(this.#decoderFor(prompt))).pipe(switchMap((d) => generate(d, prompt, options)));
  }

  /** The prompt and its new tokens, one array per row (nanoGPT's generate result). */
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

  /**
   * A trainer of this model as nanoGPT trains: AdamW with its parameter groups, betas (0.9, 0.95), clipping at 1.0 on
   * the executor (options change any of it). Each `trainer.step({ idx, targets })` is one update; read the result back
   * with `model.setWeights(await trainer.parameters())`.
   */
  trainer(options: GptTrainerOptions): Promise<Trainer> {
    return gptTrainer(this, compileOptionsOf(this.#options, "a trainer").executors, options);
  }

  /**
   * New weights by the graph's names (trained ones: `trainer.parameters()`), for every session from the next run on.
   * Every model weight must be there.
   */
  async setWeights(weights: ReadonlyMap<string, AnyTensor> | Readonly<Record<string, AnyTensor>>): Promise<void> {
    const next = Object.fromEntries(gptStateDictByName(this.graph(), weights)) as Record<string, Tensor>;
    this.#weights = next;
    for (const s of this.#sessions.values()) (await s).setWeights(next);
  }

  /** The weights as the family's own state_dict (the loaded file's names and layout), ready for writeSafetensors. */
  stateDict(): Map<string, Tensor> {
    return gptStateDict(this.graph(), this.#weights, this.layout);
  }

  async dispose(): Promise<void> {
    const sessions: Promise<{ dispose(): Promise<void> }>[] = [...this.#sessions.values(), ...this.#decoders.values()];
    this.#sessions.clear();
    this.#decoders.clear();
    await Promise.all(sessions.map(async (s) => (await s.catch(() => undefined))?.dispose()));
  }
}

/** The model's weights out of a larger map (a trainer's, with optimizer state): by the graph's names, dense copies. */
function gptStateDictByName(graph: OpGraph, weights: ReadonlyMap<string, AnyTensor> | Readonly<Record<string, AnyTensor>>): Map<string, Tensor> {
  const get = (name: string) => (weights instanceof Map ? weights.get(name) : (weights as Record<string, AnyTensor>)[name]);
  const out = new Map<string, Tensor>();
  for (const w of graph.weights) {
    const t = get(w.name);
    if (t === undefined || t.dtype !== "float32") throw new ModelInputError(`weights.${w.name}`, "a weight of the model is missing or not float32", "a float32 tensor", t === undefined ? "nothing" : t.dtype);
    out.set(w.name, t as Tensor);
  }
  return out;
}
