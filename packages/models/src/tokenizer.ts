// GPT-2's byte-level BPE (tiktoken's "gpt2" encoding, what GPT-2 and nanoGPT's `tiktoken.get_encoding("gpt2")` use)
// from js-tiktoken, whose ranks ship inside the package: encoding works offline, with nothing fetched. (gpt-tokenizer
// 4.0.0 was the other candidate; its decode keeps a shared streaming TextDecoder between calls, so a token ending
// inside a character garbles the next call's text, and it finds <|endoftext|> only at the start of a text.)
import { Tiktoken } from "js-tiktoken/lite";
import gpt2 from "js-tiktoken/ranks/gpt2";
import { GenerateError } from "./generate-error.js";

/** Text to token ids and back. */
export interface Tokenizer {
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  /** Token ids are in [0, vocabSize). */
  readonly vocabSize: number;
}

/** GPT-2's end-of-text token, `<|endoftext|>`: nanoGPT's document separator and Hugging Face's eos_token_id. */
export const GPT2_EOT = 50256;

/** The ranks parsed once (50k merges), on the first gpt2Tokenizer() call rather than at import. */
let encoding: Tiktoken | undefined;

// `<|endoftext|>` in the text is the special token (as Hugging Face's GPT2Tokenizer reads it), not its 7 pieces, so
// decode's own output round-trips; tiktoken refuses it unless allowed.
const allowedSpecial = ["<|endoftext|>"];

/** The vocabulary: 50,000 merges, 256 bytes and <|endoftext|>. */
const VOCAB_SIZE = 50257;

/** GPT-2's tokenizer: `encode("Hello world")` is [15496, 995]; 50257 tokens. */
export function gpt2Tokenizer(): Tokenizer {
  encoding ??= new Tiktoken(gpt2);
  const enc = encoding;
  return {
    encode: (text) => {
      if (typeof text !== "string")
        throw new GenerateError(
          "gpt2Tokenizer.encode text",
          "not text",
          "a string",
          text === null ? "null" : typeof text,
        );
      return enc.encode(text, allowedSpecial);
    },
    decode: (ids) => {
      // Checked here: tiktoken decodes an id it does not know as nothing, so a wrong id would vanish from the text.
      ids.forEach((id, i) => {
        if (!Number.isSafeInteger(id) || id < 0 || id >= VOCAB_SIZE)
          throw new GenerateError(
            `gpt2Tokenizer.decode ids[${i}]`,
            "not a GPT-2 token id",
            `an integer in [0, ${VOCAB_SIZE})`,
            String(id),
          );
      });
      return enc.decode(ids as number[]);
    },
    vocabSize: VOCAB_SIZE,
  };
}
