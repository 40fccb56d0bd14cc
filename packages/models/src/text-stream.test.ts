// Streaming text: a token that ends inside a UTF-8 character gives out nothing until the next token completes it.
import { describe, expect, it } from "vitest";
import { TextStream } from "./text-stream.js";
import { gpt2Tokenizer } from "./tokenizer.js";

describe("TextStream", () => {
  it("holds back an incomplete character and gives it out whole; finished rows add nothing", () => {
    // A byte tokenizer: each id is one byte, decoded as UTF-8 (U+FFFD for an incomplete sequence, as TextDecoder does).
    const bytes = { decode: (ids: readonly number[]) => new TextDecoder().decode(new Uint8Array(ids)) };
    const stream = new TextStream(2);
    const euro = [0xe2, 0x82, 0xac]; // "€"
    const out = [0x61, ...euro, 0x62].map((t) => stream.add([t, t], [false, true], bytes));
    expect(out.map((r) => r[0])).toEqual(["a", "", "", "€", "b"]);
    expect(out.map((r) => r[1])).toEqual(["", "", "", "", ""]);
  });

  it("with GPT-2's tokenizer, the pieces join to the decode of all tokens", () => {
    const tok = gpt2Tokenizer();
    const ids = tok.encode("naïve café — 日本語 👋 done");
    const stream = new TextStream(1);
    const pieces = ids.map((t) => stream.add([t], [false], tok)[0]!);
    expect(pieces.join("")).toBe("naïve café — 日本語 👋 done");
    expect(pieces.some((p) => p.includes("\uFFFD"))).toBe(false);
  });
});
