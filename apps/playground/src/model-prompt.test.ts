import { gpt2Tokenizer } from "@attngraph/models";
import { describe, expect, it } from "vitest";
import { GPT2_VOCAB, parseTokenIds, promptIds, tokenizerFor, tokenLabel } from "./model-prompt.js";

describe("parseTokenIds", () => {
  it("reads ids separated by spaces, commas or newlines", () => {
    expect(parseTokenIds(" 13 3\n22,27 ", 50)).toEqual([13, 3, 22, 27]);
  });

  it("names the bad token and the vocabulary's range", () => {
    expect(() => parseTokenIds("1 50", 50)).toThrow('prompt token 1: expected an integer in [0, 50), got "50"');
    expect(() => parseTokenIds("1 -2", 50)).toThrow('prompt token 1: expected an integer in [0, 50), got "-2"');
    expect(() => parseTokenIds("1.5", 50)).toThrow('prompt token 0: expected an integer in [0, 50), got "1.5"');
    expect(() => parseTokenIds("  ", 50)).toThrow(
      "prompt: expected token ids separated by spaces (integers in [0, 50)), got nothing",
    );
  });

  it("throws what the errors view files under Bad config", () => {
    expect(() => parseTokenIds("x", 5)).toThrow(expect.objectContaining({ name: "ConfigError" }));
  });
});

describe("promptIds and tokenLabel", () => {
  it("takes text through GPT-2's tokenizer only for GPT-2's vocabulary", () => {
    const tok = tokenizerFor(GPT2_VOCAB, gpt2Tokenizer);
    expect(tok).toBeDefined();
    expect(tokenizerFor(50, gpt2Tokenizer)).toBeUndefined();
    expect(promptIds("Hello world", GPT2_VOCAB, tok)).toEqual([15496, 995]);
    expect(() => promptIds("", GPT2_VOCAB, tok)).toThrow("prompt: expected some text");
    expect(promptIds("3 4", 50, undefined)).toEqual([3, 4]);
  });

  it("shows ids without a tokenizer, visible spaces with one", () => {
    const tok = gpt2Tokenizer();
    expect(tokenLabel(7, undefined)).toBe("7");
    expect(tokenLabel(995, tok)).toBe("·world");
    expect(tokenLabel(198, tok)).toBe("↵");
    expect(tokenLabel(5, tok, "")).toBe("#5");
  });
});
