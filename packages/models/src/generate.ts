// Autoregressive generation on a KV-cache decoder (compileDecoder), nanoGPT's `generate` loop: the prompt is fed once,
// then each step feeds the one token just sampled. Sampling runs on the host from the downloaded logits of each
// step's last position (sampling.ts), with a seeded generator, so it is the same on every executor. An rxjs
// Observable: subscribing starts a generation, unsubscribing cancels it (the running step stops through its signal).
import type { Decoder } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { Observable } from "rxjs";
import { GenerateAbortError, GenerateError } from "./generate-error.js";
import { checkOptions, type CheckedOptions, type GenerateOptions } from "./generate-options.js";
import { graphIO, promptRows, type GraphIO, type Prompt } from "./generate-prompt.js";
import { splitmix32 } from "./prng.js";
import { sampleToken } from "./sampling.js";
import { TextStream } from "./text-stream.js";

/** One generated position: the token of every row (a number when the decoder's batch is 1, else one per row). */
export interface TokenEvent {
  readonly type: "token";
  /** 0 for the first new token. */
  readonly index: number;
  readonly token: number | number[];
  /** With `logits: true`: the logits [V] the token was drawn from (before temperature, top-k and top-p). */
  readonly logits?: Float32Array | Float32Array[];
  /** With a tokenizer: the text this token adds (empty while a multi-byte character is incomplete). */
  readonly text?: string | string[];
}

/** Generations on one decoder run one after another: a decoder holds one sequence. */
const turns = new WeakMap<Decoder, Promise<unknown>>();

/**
 * Generates `maxNewTokens` tokens after `prompt` on `decoder`, whose graph takes int32 ids [B, T] (`options.input`,
 * default "idx") and outputs logits [B, T, V] (`options.output`, default "logits"). Each subscription resets the
 * decoder and emits one TokenEvent per new position, then completes: early when every row sampled a stop token.
 * A bad prompt or option throws a GenerateError here, before anything runs; aborting `options.signal` errors the
 * observable with a GenerateAbortError; unsubscribing stops it silently.
 *
 * ```ts
 * const decoder = await compileDecoder(graph, { executors: [createCpuExecutor()], weights, maxLength: 1024 });
 * generate(decoder, "Hello", { maxNewTokens: 20, topK: 40, seed: 1, tokenizer: gpt2Tokenizer() })
 *   .subscribe((e) => process.stdout.write(e.text as string));
 * ```
 */
export function generate(decoder: Decoder, prompt: Prompt, options: GenerateOptions): Observable<TokenEvent> {
  return prepare(decoder, prompt, options).events;
}

/**
 * The prompt and its new tokens, one array per row (nanoGPT's `generate` result), once generation ends. A row that
 * sampled a stop token ends with it. Rejects as generate() errors.
 */
export async function generateTokens(decoder: Decoder, prompt: Prompt, options: GenerateOptions): Promise<number[][]> {
  const { rows, events, stopTokens } = prepare(decoder, prompt, options);
  const done = rows.map(() => false);
  return new Promise((resolve, reject) => {
    events.subscribe({
      next: (e) => {
        const tokens = typeof e.token === "number" ? [e.token] : e.token;
        tokens.forEach((t, b) => {
          if (done[b]) return;
          rows[b]!.push(t);
          done[b] = stopTokens.has(t);
        });
      },
      error: reject,
      complete: () => resolve(rows),
    });
  });
}

function prepare(decoder: Decoder, prompt: Prompt, options: GenerateOptions) {
  const o = checkOptions(options, decoder.maxLength);
  const io = graphIO(decoder.session.graph, o.input, o.output);
  const rows = promptRows(prompt, o.tokenizer, io, decoder.batch, o.blockSize);
  const events = new Observable<TokenEvent>((subscriber) => {
    const stop = new AbortController();
    const onAbort = () => stop.abort(o.signal!.reason);
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener("abort", onAbort, { once: true });
    const run = (turns.get(decoder) ?? Promise.resolve()).then(() =>
      decode(decoder, rows, o, io, stop.signal, (e) => subscriber.next(e)),
    );
    turns.set(
      decoder,
      run.catch(() => undefined),
    );
    run
      .then(
        () => subscriber.complete(),
        (e: unknown) => subscriber.error(e),
      )
      .finally(() => o.signal?.removeEventListener("abort", onAbort));
    return () => stop.abort();
  });
  return { rows: rows.map((r) => [...r]), events, stopTokens: o.stopTokens };
}

/** The generation loop: feed, download the last position's logits, sample, emit; crop to blockSize as nanoGPT does. */
async function decode(
  decoder: Decoder,
  prompt: number[][],
  o: CheckedOptions,
  io: GraphIO,
  signal: AbortSignal,
  emit: (e: TokenEvent) => void,
): Promise<void> {
  const B = prompt.length;
  const random = splitmix32(o.seed);
  const sequences = prompt.map((r) => [...r]);
  const done = prompt.map(() => false);
  const text = o.tokenizer ? new TextStream(B) : undefined;
  let feed = prompt;
  if (o.maxNewTokens === 0) return;
  decoder.reset();
  for (let index = 0; index < o.maxNewTokens; index++) {
    if (signal.aborted) throw new GenerateAbortError(index, signal.reason);
    // nanoGPT's idx[:, -block_size:]: a context that would outgrow blockSize restarts from its last blockSize tokens.
    if (decoder.length + feed[0]!.length > o.blockSize) {
      decoder.reset();
      feed = sequences.map((s) => s.slice(-o.blockSize));
    }
    const T = feed[0]!.length;
    let outputs: Record<string, Tensor>;
    try {
      outputs = await decoder.step({ [io.input]: Tensor.int32(feed.flat(), [B, T]) }, { signal });
    } catch (e) {
      if (signal.aborted) throw new GenerateAbortError(index, e);
      throw e;
    }
    const last = lastPositions(outputs[io.output], io.output, B, T);
    const tokens = last.map((row, b) => {
      if (done[b]) return sequences[b]!.at(-1)!;
      const t = sampleToken(row, o.sampling, random, `${io.output}[${b}, ${T - 1}]`);
      if (t >= io.vocabSize)
        throw new GenerateError(
          `${io.output}[${b}, ${T - 1}]`,
          "sampled a token the graph cannot take back (the logits' V exceeds the embedding's rows)",
          `an id < ${io.vocabSize}`,
          String(t),
        );
      return t;
    });
    const added = text?.add(tokens, done, o.tokenizer!);
    tokens.forEach((t, b) => {
      if (!done[b]) sequences[b]!.push(t);
      done[b] ||= o.stopTokens.has(t);
    });
    emit({
      type: "token",
      index,
      token: B === 1 ? tokens[0]! : tokens,
      ...(o.logits ? { logits: B === 1 ? last[0]! : last } : {}),
      ...(added ? { text: B === 1 ? added[0]! : added } : {}),
    });
    if (done.every(Boolean)) return;
    feed = tokens.map((t) => [t]);
  }
}

/**
 * The logits of each row's last position, copied out of logits [B, T, V], or [B, 1, V] from a graph that computes the
 * last position's only (a causal LM's decoder with `logits: "last"`).
 */
function lastPositions(logits: Tensor | undefined, name: string, B: number, T: number): Float32Array[] {
  const L = logits?.shape[1];
  if (logits === undefined || logits.shape.length !== 3 || logits.shape[0] !== B || (L !== T && L !== 1)) {
    throw new GenerateError(
      `graph output ${name}`,
      "the step's logits do not have the fed shape",
      `[${B}, ${T}, V] (or [${B}, 1, V]: the last position's)`,
      logits ? `[${logits.shape.join(", ")}]` : "no such output",
    );
  }
  const V = logits.shape[2]!;
  // Only the last position is read: a view of it copies B · V values, not B · T · V.
  const s = logits.strides;
  const last = new Tensor(logits.data, [B, V], [s[0]!, s[2]!], logits.offset + (L! - 1) * s[1]!);
  const data = last.toFloat32Array();
  return Array.from({ length: B }, (_, b) => data.slice(b * V, (b + 1) * V));
}
