// The text of generated tokens as it grows, for generate()'s events.
import type { Tokenizer } from "./tokenizer.js";

/**
 * Each row's generated text, given out as it grows: the decode of all its new tokens so far, less what was given out
 * before. A byte-level BPE token may end inside a UTF-8 character; until the next token completes it, the decode
 * ends in U+FFFD and nothing is given out.
 */
export class TextStream {
  readonly #ids: number[][];
  readonly #given: number[];
  constructor(rows: number) {
    this.#ids = Array.from({ length: rows }, () => []);
    this.#given = new Array<number>(rows).fill(0);
  }

  add(tokens: readonly number[], done: readonly boolean[], tokenizer: Pick<Tokenizer, "decode">): string[] {
    return tokens.map((t, b) => {
      if (done[b]) return "";
      this.#ids[b]!.push(t);
      const all = tokenizer.decode(this.#ids[b]!);
      if (all.endsWith("\uFFFD")) return "";
      const added = all.slice(this.#given[b]);
      this.#given[b] = all.length;
      return added;
    });
  }
}
