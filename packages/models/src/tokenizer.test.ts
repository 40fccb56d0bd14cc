// GPT-2's tokenizer against ids from the reference (tiktoken's "gpt2" encoding / Hugging Face's GPT2Tokenizer).
import { describe, expect, it } from "vitest";
import { GenerateError } from "./generate-error.js";
import { GPT2_EOT, gpt2Tokenizer } from "./tokenizer.js";

describe("gpt2Tokenizer", () => {
  const tok = gpt2Tokenizer();

  it('encodes "Hello world" as [15496, 995] and decodes it back', () => {
    expect(tok.encode("Hello world")).toEqual([15496, 995]);
    expect(tok.decode([15496, 995])).toBe("Hello world");
    expect(tok.vocabSize).toBe(50257);
  });

  it("reads <|endoftext|> as the one special token 50256, and round-trips unicode", () => {
    expect(tok.encode("a<|endoftext|>b")).toEqual([64, GPT2_EOT, 65]);
    const text = "naïve café — 日本語 👋";
    expect(tok.decode(tok.encode(text))).toBe(text);
  });

  it("a decode that ends inside a character ends in U+FFFD and leaves the next decode as it is (no state kept)", () => {
    const ids = tok.encode(" 日本");
    expect(tok.decode(ids.slice(0, 1)).endsWith("\uFFFD")).toBe(true);
    expect(tok.decode([15496, 995])).toBe("Hello world");
    expect(tok.decode(ids)).toBe(" 日本");
  });

  it("an id outside the vocabulary or text that is not a string is a GenerateError naming it", () => {
    expect(() => tok.decode([15496, 50257])).toThrow(
      /gpt2Tokenizer\.decode ids\[1\]: not a GPT-2 token id \(expected an integer in \[0, 50257\), got 50257\)/,
    );
    expect(() => tok.decode([1.5])).toThrow(GenerateError);
    expect(() => tok.encode(42 as never)).toThrow(
      /gpt2Tokenizer\.encode text: not text \(expected a string, got number\)/,
    );
  });
});
