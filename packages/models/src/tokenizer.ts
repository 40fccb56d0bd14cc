// GPT-2's byte-level BPE (tiktoken's r50k_base, the ranks GPT-2 and nanoGPT's `tiktoken.get_encoding("gpt2")` use)
// from gpt-tokenizer, whose ranks ship inside the package: encoding works offline, with nothing fetched.
import { decode, encode, vocabularySize } from "gpt-tokenizer/encoding/r50k_base";
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

const EOT_TEXT = "<|endoftext|>";

/**
 * `<|endoftext|>` in the text is the special token (as Hugging Face's GPT2Tokenizer reads it), not its 7 pieces, so
 * decode's own output round-trips. Split here rather than with gpt-tokenizer's `allowedSpecial`: its 4.0.0 finds the
 * special token only at the start of the text (a sticky regex), and refuses it anywhere else.
 */
function encodeWithEot(text: string): number[] {
  if (typeof text !== "string") throw new GenerateError("gpt2Tokenizer.encode text", "not text", "a string", text === null ? "null" : typeof text);
  const ids: number[] = [];
  text.split(EOT_TEXT).forEach((piece, i) => {
    if (i > 0) ids.push(GPT2_EOT);
    if (piece.length > 0) ids.push(...encode(piece));
  });
  return ids;
}

/** GPT-2's tokenizer: `encode("Hello world")` is [15496, 995]; 50257 tokens. */
export function gpt2Tokenizer(): Tokenizer {
  return {
    encode: encodeWithEot,
    decode: (ids) => {
      // Checked here: gpt-tokenizer throws a plain Error for an unknown id, naming neither its position nor the range.
      ids.forEach((id, i) => {
        if (!Number.isSafeInteger(id) || id < 0 || id >= vocabularySize) throw new GenerateError(`gpt2Tokenizer.decode ids[${i}]`, "not a GPT-2 token id", `an integer in [0, ${vocabularySize})`, String(id));
      });
      return decode(ids);
    },
    vocabSize: vocabularySize,
  };
}
