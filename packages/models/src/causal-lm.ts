// What every causal language model here shares (GPT-2 / nanoGPT, Llama): token ids in, logits out; the graphs it runs
// as (forward, forward with loss, decode) built on first use and compiled once; ids checked on the host before
// anything runs; generation on a KV-cache decoder per batch size; new weights reaching every session and decoder.
// A family adds its graph builder, its description and the way back to its file's layout.
import type { OpGraph } from "@attngraph/graph";
import { compileDecoder, type Decoder, type RunOptions } from "@attngraph/runtime";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { defer, from, switchMap, type Observable } from "rxjs";
import { generate, generateTokens, type TokenEvent } from "./generate.js";
import type { GenerateOptions } from "./generate-options.js";
import type { Prompt } from "./generate-prompt.js";
import type { LmGraphOptions } from "./lm-graph.js";
import { LoadedModel, compileOptionsOf, type ModelCompileOptions } from "./loaded-model.js";
import { ModelInputError, checkInputsObject, tokenIds } from "./token-ids.js";

export { compileOptionsOf, type ModelCompileOptions } from "./loaded-model.js";
export type { LmGraphOptions } from "./lm-graph.js";

/** What a family hands CausalLm besides its config: its graph, the target its loss skips, and its context. */
export interface LmFamily<Config> {
  readonly graph: (config: Config, options: LmGraphOptions) => OpGraph;
  /** The target the loss skips (nanoGPT's ignore_index -1, Hugging Face's -100). */
  readonly ignoreIndex: number;
  /** The most positions the model has (nanoGPT's block_size, Llama's max_position_embeddings), and its name. */
  readonly context: { readonly length: number; readonly name: string };
}

export abstract class CausalLm<Config extends { readonly vocabSize: number }> extends LoadedModel<
  Config,
  LmGraphOptions
> {
  /** generate()'s decoders by batch size. */
  readonly #decoders = new Map<number, Promise<Decoder>>();
  readonly #family: LmFamily<Config>;

  constructor(config: Config, weights: Record<string, Tensor>, options: ModelCompileOptions, family: LmFamily<Config>) {
    super(config, weights, options);
    this.#family = family;
  }

  protected buildGraph(options: LmGraphOptions): OpGraph {
    return this.#family.graph(this.config, options);
  }

  protected graphKey(options: LmGraphOptions): string {
    return `${options.loss ? "loss" : ""}${options.decode ? "decode" : ""}${options.lastPosition ? "last" : ""}`;
  }

  /**
   * The graph a forward call runs and its inputs, checked (ids in the vocabulary, T within the context, targets
   * shaped like idx) before anything runs: what run() feeds, and what a tool (a per-node diff, an export) takes.
   */
  prepare(inputs: { readonly idx: unknown; readonly targets?: unknown }): {
    graph: OpGraph;
    inputs: Record<string, AnyTensor>;
    loss: boolean;
  } {
    checkInputsObject(inputs, "{ idx, targets? }");
    const { length } = this.#family.context;
    const { vocabSize } = this.config;
    const idx = tokenIds("idx", inputs.idx, vocabSize, length);
    const loss = inputs.targets !== undefined;
    const feed: Record<string, AnyTensor> = { idx };
    if (loss) {
      const targets = tokenIds("targets", inputs.targets, vocabSize, length, this.#family.ignoreIndex);
      if (targets.shape[0] !== idx.shape[0] || targets.shape[1] !== idx.shape[1])
        throw new ModelInputError(
          "targets",
          "targets must be shaped like idx",
          `[${idx.shape.join(", ")}]`,
          `[${targets.shape.join(", ")}]`,
        );
      feed["targets"] = targets;
    }
    return { graph: this.graph({ loss }), inputs: feed, loss };
  }

  /**
   * Logits [B, T, vocab] of token ids [B, T] (an int32 Tensor or nested arrays), and with `targets` the mean
   * cross-entropy `loss` (nanoGPT's forward(idx, targets)). Ids are checked before anything runs.
   */
  run(
    inputs: { readonly idx: unknown; readonly targets: unknown },
    options?: RunOptions,
  ): Promise<{ logits: Tensor; loss: Tensor }>;
  run(
    inputs: { readonly idx: unknown; readonly targets?: undefined },
    options?: RunOptions,
  ): Promise<{ logits: Tensor; loss?: Tensor }>;
  async run(
    inputs: { readonly idx: unknown; readonly targets?: unknown },
    options: RunOptions = {},
  ): Promise<{ logits: Tensor; loss?: Tensor }> {
    const { inputs: feed, loss } = this.prepare(inputs);
    const out = await (await this.session({ loss })).run(feed, options);
    return loss ? { logits: out["logits"]!, loss: out["loss"]! } : { logits: out["logits"]! };
  }

  /**
   * A KV-cache decoder of this model (maxLength: the model's context by default), loaded from the same weights. Its
   * steps output logits [B, T, V] for every fed position, or with `logits: "last"` [B, 1, V] for the last one only
   * (what generate() uses: a prompt's head then runs on one row instead of T).
   */
  decoder(
    options: { readonly maxLength?: number; readonly batch?: number; readonly logits?: "all" | "last" } = {},
  ): Promise<Decoder> {
    const { length, name } = this.#family.context;
    const maxLength = options.maxLength ?? length;
    if (!Number.isSafeInteger(maxLength) || maxLength < 1 || maxLength > length)
      throw new ModelInputError(
        "decoder maxLength",
        "the cache cannot hold more positions than the model has",
        `an integer in 1..${length} (${name})`,
        String(options.maxLength),
      );
    if (options.logits !== undefined && options.logits !== "all" && options.logits !== "last")
      throw new ModelInputError(
        "decoder logits",
        "which positions' logits a step outputs",
        '"all" or "last"',
        String(options.logits),
      );
    return compileDecoder(this.graph({ decode: true, ...(options.logits === "last" ? { lastPosition: true } : {}) }), {
      ...compileOptionsOf(this.options, "a decoder"),
      weights: this.weights,
      maxLength,
      ...(options.batch === undefined ? {} : { batch: options.batch }),
    });
  }

  /**
   * Generates after `prompt` (ids, rows of ids, an int32 [B, P] tensor, or text with `options.tokenizer`) on this
   * model's KV-cache decoder (one per batch size, made on first use): generate()'s events, one per new token.
   * Positions past the context crop it as nanoGPT does.
   */
  generate(prompt: Prompt, options: GenerateOptions): Observable<TokenEvent> {
    return defer(() => from(this.#decoderFor(prompt))).pipe(switchMap((d) => generate(d, prompt, options)));
  }

  /** The prompt and its new tokens, one array per row (nanoGPT's generate result). */
  async generateTokens(prompt: Prompt, options: GenerateOptions): Promise<number[][]> {
    return generateTokens(await this.#decoderFor(prompt), prompt, options);
  }

  #decoderFor(prompt: Prompt): Promise<Decoder> {
    const batch = Tensor.isTensor(prompt)
      ? prompt.shape[0]!
      : Array.isArray(prompt) && Array.isArray(prompt[0])
        ? prompt.length
        : 1;
    let d = this.#decoders.get(batch);
    if (!d) {
      d = this.decoder({ batch, logits: "last" });
      this.#decoders.set(batch, d);
      d.catch(() => this.#decoders.delete(batch));
    }
    return d;
  }

  /** The generation decoders take new weights too (setWeights). */
  protected override async weightsChanged(next: Record<string, Tensor>): Promise<void> {
    for (const d of this.#decoders.values()) (await d).session.setWeights(next);
  }

  protected override held(): Promise<Decoder>[] {
    const decoders = [...this.#decoders.values()];
    this.#decoders.clear();
    return decoders;
  }
}
