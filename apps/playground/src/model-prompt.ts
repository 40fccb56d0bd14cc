// The Model tab's prompt box: text through GPT-2's tokenizer when the model's vocabulary is GPT-2's (50257), else
// space-separated token ids (the small test models have no tokenizer). Also how one token reads on the page.
import type { Tokenizer } from "@attngraph/models";

/** The vocabulary size of GPT-2's tokenizer: a model of this size takes text prompts. */
export const GPT2_VOCAB = 50257;

/** A prompt the page cannot turn into token ids; its message names the token, what was expected and what came. */
export class PromptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError"; // the errors view's "Bad config"
  }
}

/** Space-separated (or comma-separated) ids, each an integer in [0, vocabSize). */
export function parseTokenIds(raw: string, vocabSize: number): number[] {
  const parts = raw.split(/[\s,]+/).filter((p) => p !== "");
  if (parts.length === 0)
    throw new PromptError(
      `prompt: expected token ids separated by spaces (integers in [0, ${vocabSize})), got nothing`,
    );
  return parts.map((p, i) => {
    const id = /^\d+$/.test(p) ? Number(p) : Number.NaN;
    if (!Number.isSafeInteger(id) || id >= vocabSize)
      throw new PromptError(`prompt token ${i}: expected an integer in [0, ${vocabSize}), got "${p.slice(0, 20)}"`);
    return id;
  });
}

/** The prompt's ids: encoded text with a tokenizer, else parsed ids. */
export function promptIds(raw: string, vocabSize: number, tokenizer: Tokenizer | undefined): number[] {
  if (!tokenizer) return parseTokenIds(raw, vocabSize);
  if (raw === "") throw new PromptError("prompt: expected some text, got nothing");
  return tokenizer.encode(raw);
}

/** GPT-2's tokenizer for a GPT-2-sized vocabulary; none for any other (prompts are then ids). */
export function tokenizerFor(vocabSize: number, gpt2: () => Tokenizer): Tokenizer | undefined {
  return vocabSize === GPT2_VOCAB ? gpt2() : undefined;
}

/** How a token reads on the page: its text (spaces and newlines made visible), or its id without a tokenizer. */
export function tokenLabel(id: number, tokenizer: Tokenizer | undefined, text?: string): string {
  if (!tokenizer) return String(id);
  const t = text ?? tokenizer.decode([id]);
  // A token that ends inside a multi-byte character decodes to nothing yet: show its id rather than an empty box.
  return t === "" ? `#${id}` : t.replace(/ /g, "·").replace(/\n/g, "↵");
}
