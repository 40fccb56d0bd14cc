import { describe, expect, it } from "vitest";
import { GENERATE_DEFAULTS, parseGenerateSettings, type RawGenerateSettings } from "./model-settings.js";

const raw: RawGenerateSettings = {
  executor: "cpu",
  maxNewTokens: "20",
  temperature: "0.8",
  topK: "200",
  topP: "",
  seed: "1337",
  greedy: false,
};

describe("parseGenerateSettings", () => {
  it("reads the form's strings; empty top-p (or top-k) turns it off", () => {
    expect(parseGenerateSettings(raw)).toEqual(GENERATE_DEFAULTS);
    expect(parseGenerateSettings({ ...raw, topK: " ", topP: "0.9", greedy: true })).toMatchObject({
      topK: undefined,
      topP: 0.9,
      greedy: true,
    });
    expect(parseGenerateSettings({ ...raw, temperature: "0" }).temperature).toBe(0);
  });

  it("names the bad field and what it expected", () => {
    expect(() => parseGenerateSettings({ ...raw, maxNewTokens: "0" })).toThrow(
      'max new tokens: expected an integer from 1 to 4096, got "0"',
    );
    expect(() => parseGenerateSettings({ ...raw, temperature: "-1" })).toThrow(
      "temperature: expected a number >= 0 (0 is greedy)",
    );
    expect(() => parseGenerateSettings({ ...raw, topK: "0" })).toThrow(
      'top-k: expected an integer >= 1, or empty for all tokens, got "0"',
    );
    expect(() => parseGenerateSettings({ ...raw, topP: "1.5" })).toThrow("top-p: expected a number in (0, 1]");
    expect(() => parseGenerateSettings({ ...raw, seed: "x" })).toThrow('seed: expected an integer >= 0, got "x"');
    expect(() => parseGenerateSettings({ ...raw, seed: "x" })).toThrow(
      expect.objectContaining({ name: "ConfigError" }),
    );
  });
});
