// generate()'s options: declared once, checked once, before any kernel runs. Every bad value is a GenerateError naming
// the option, what it takes and what came.
import type { Tokenizer } from "./tokenizer.js";
import { GenerateError } from "./generate-error.js";
import type { SamplingOptions } from "./sampling.js";

export interface GenerateOptions {
  /** New tokens per row (a non-negative integer; 0 emits nothing), nanoGPT's max_new_tokens. */
  readonly maxNewTokens: number;
  /** Divides the logits before sampling (>= 0; default 1). 0 is greedy, as `greedy: true`. */
  readonly temperature?: number;
  /** Argmax instead of a draw (the first maximum on ties); topK, topP and seed are then unused. */
  readonly greedy?: boolean;
  /** Sample among the k most probable tokens only (an integer >= 1; k >= V keeps all), nanoGPT's top_k. */
  readonly topK?: number;
  /** Nucleus sampling as Hugging Face does it: the smallest set whose probability sums to >= p, in (0, 1]. */
  readonly topP?: number;
  /** Seed of the sampler's generator (an integer, modulo 2^32): the same seed and logits give the same tokens. Default: drawn from Math.random. */
  readonly seed?: number;
  /** A row that samples one of these is done: its event carries the stop token, and later events repeat it (as Hugging Face pads with eos). Generation ends when every row is done. */
  readonly stopTokens?: readonly number[];
  /** Aborting cancels: the running step stops, and the observable errors with a GenerateAbortError (name "AbortError"). */
  readonly signal?: AbortSignal;
  /** Each event carries the logits of its position (the last one of the step), Float32Array [V] (one per row when batched). */
  readonly logits?: boolean;
  /**
   * The context the model sees, nanoGPT's block_size (an integer in [1, decoder.maxLength]; default maxLength). When
   * the sequence outgrows it, the decoder is reset and the last blockSize tokens are fed again, as nanoGPT crops
   * `idx[:, -block_size:]`, so positions restart at 0 exactly as there (and each later step re-feeds blockSize
   * tokens, as nanoGPT's full forward does).
   */
  readonly blockSize?: number;
  /** The graph input of token ids [B, T] (int32). Default "idx" (nanoGPT's name). */
  readonly input?: string;
  /** The graph output of logits [B, T, V]. Default "logits". */
  readonly output?: string;
  /** Encodes a text prompt and gives each event a `text` (the new text since the previous event). */
  readonly tokenizer?: Tokenizer;
}

/** The options checked and with their defaults. */
export interface CheckedOptions {
  readonly maxNewTokens: number;
  readonly sampling: SamplingOptions;
  readonly seed: number;
  readonly stopTokens: ReadonlySet<number>;
  readonly signal: AbortSignal | undefined;
  readonly logits: boolean;
  readonly blockSize: number;
  readonly input: string;
  readonly output: string;
  readonly tokenizer: Tokenizer | undefined;
}

const KNOWN = new Set([
  "maxNewTokens",
  "temperature",
  "greedy",
  "topK",
  "topP",
  "seed",
  "stopTokens",
  "signal",
  "logits",
  "blockSize",
  "input",
  "output",
  "tokenizer",
]);

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return "an array";
  return v === null ? "null" : typeof v === "object" || typeof v === "function" ? `a ${typeof v}` : String(v);
}

function bad(key: string, what: string, expected: string, v: unknown): never {
  throw new GenerateError(`generate options.${key}`, what, expected, show(v));
}

/** Checks `options` against a decoder of cache length `maxLength`; returns them with defaults filled in. */
export function checkOptions(options: GenerateOptions, maxLength: number): CheckedOptions {
  if (typeof options !== "object" || options === null)
    throw new GenerateError("generate options", "options must be an object", "{ maxNewTokens, ... }", show(options));
  for (const key of Object.keys(options))
    if (!KNOWN.has(key))
      bad(key, "unknown option", [...KNOWN].join(", "), (options as unknown as Record<string, unknown>)[key]);
  const {
    maxNewTokens,
    temperature = 1,
    greedy = false,
    topK,
    topP,
    stopTokens = [],
    signal,
    logits = false,
    blockSize = maxLength,
    input = "idx",
    output = "logits",
    tokenizer,
  } = options;
  if (!Number.isSafeInteger(maxNewTokens) || maxNewTokens < 0)
    bad("maxNewTokens", "must be a non-negative integer", "an integer >= 0", maxNewTokens);
  if (typeof temperature !== "number" || !(temperature >= 0) || !Number.isFinite(temperature))
    bad("temperature", "must be a finite number >= 0 (0 is greedy)", "a number >= 0", temperature);
  if (typeof greedy !== "boolean") bad("greedy", "must be true or false", "a boolean", greedy);
  if (topK !== undefined && (!Number.isSafeInteger(topK) || topK < 1))
    bad("topK", "must be an integer >= 1", "an integer >= 1", topK);
  if (topP !== undefined && (typeof topP !== "number" || !(topP > 0 && topP <= 1)))
    bad("topP", "must be in (0, 1]", "a number p with 0 < p <= 1", topP);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  if (!Number.isSafeInteger(seed)) bad("seed", "must be an integer (taken modulo 2^32)", "an integer", seed);
  if (!Array.isArray(stopTokens) || !stopTokens.every((t) => Number.isSafeInteger(t) && t >= 0))
    bad("stopTokens", "must be token ids", "an array of integers >= 0", stopTokens);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    bad("signal", "must be an AbortSignal", "an AbortSignal", signal);
  if (typeof logits !== "boolean") bad("logits", "must be true or false", "a boolean", logits);
  if (!Number.isSafeInteger(blockSize) || blockSize < 1 || blockSize > maxLength)
    bad(
      "blockSize",
      "the context must fit the decoder's cache",
      `an integer in [1, ${maxLength}] (the decoder's maxLength)`,
      blockSize,
    );
  if (typeof input !== "string") bad("input", "must be an input name", "a string", input);
  if (typeof output !== "string") bad("output", "must be an output name", "a string", output);
  if (tokenizer !== undefined && (typeof tokenizer?.encode !== "function" || typeof tokenizer?.decode !== "function"))
    bad("tokenizer", "must encode and decode", "{ encode(text), decode(ids) } (e.g. gpt2Tokenizer())", tokenizer);
  return {
    maxNewTokens,
    sampling: { temperature, greedy: greedy || temperature === 0, topK, topP },
    seed,
    stopTokens: new Set(stopTokens),
    signal,
    logits,
    blockSize,
    input,
    output,
    tokenizer,
  };
}
