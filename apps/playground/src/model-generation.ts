// One generation on the Model tab: generate() subscribed, each token handed to the page as it comes, and a stop that
// unsubscribes (generate's running decoder step is aborted through its signal, so nothing is emitted after it).
import { generate, type Tokenizer } from "@attngraph/models";
import type { Decoder } from "@attngraph/runtime";
import type { GenerateSettings } from "./model-settings.js";

export interface GenerationHandlers {
  /** One new token: its id, and with a tokenizer the text it adds (empty inside a multi-byte character). */
  onToken(index: number, token: number, text: string | undefined): void;
  /** maxNewTokens reached. */
  onDone(): void;
  onError(error: unknown): void;
}

export interface Generation {
  /** Stops it: no handler is called after this. */
  stop(): void;
}

/**
 * Starts generating after `prompt` on `decoder`. A bad option or prompt throws here (a GenerateError naming it),
 * before anything runs; a failure while running goes to onError.
 */
export function startGeneration(
  decoder: Decoder,
  prompt: readonly number[],
  s: GenerateSettings,
  tokenizer: Tokenizer | undefined,
  h: GenerationHandlers,
): Generation {
  const events = generate(decoder, [...prompt], {
    maxNewTokens: s.maxNewTokens,
    temperature: s.temperature,
    greedy: s.greedy,
    seed: s.seed,
    ...(s.topK === undefined ? {} : { topK: s.topK }),
    ...(s.topP === undefined ? {} : { topP: s.topP }),
    ...(tokenizer ? { tokenizer } : {}),
  });
  const sub = events.subscribe({
    next: (e) => h.onToken(e.index, e.token as number, e.text as string | undefined),
    error: (e: unknown) => h.onError(e),
    complete: () => h.onDone(),
  });
  return { stop: () => sub.unsubscribe() };
}
