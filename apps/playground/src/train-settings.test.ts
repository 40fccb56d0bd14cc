import { describe, expect, it } from "vitest";
import { parseTrainSettings, TRAIN_DEFAULTS } from "./train-settings.js";

const raw = { executor: "wasm", steps: "50", lr: "0.001", seed: "3" };

describe("parseTrainSettings", () => {
  it("reads the form's strings; the defaults are the CLI's", () => {
    expect(parseTrainSettings(raw)).toEqual({ executor: "wasm", steps: 50, lr: 0.001, seed: 3 });
    expect(parseTrainSettings({ executor: "cpu", steps: "50", lr: "1e-3", seed: "3" })).toEqual(TRAIN_DEFAULTS);
  });

  it("names the bad field and what it expected", () => {
    expect(() => parseTrainSettings({ ...raw, steps: "0" })).toThrow(
      'steps: expected an integer from 1 to 10000, got "0"',
    );
    expect(() => parseTrainSettings({ ...raw, steps: "2.5" })).toThrow("steps: expected an integer");
    expect(() => parseTrainSettings({ ...raw, lr: "" })).toThrow('lr: expected a number > 0 (and < 10), got ""');
    expect(() => parseTrainSettings({ ...raw, lr: "-1" })).toThrow("lr: expected a number > 0");
    expect(() => parseTrainSettings({ ...raw, seed: "x" })).toThrow('seed: expected an integer >= 0, got "x"');
  });

  it("throws an error the errors view files under Bad config", () => {
    try {
      parseTrainSettings({ ...raw, seed: "-1" });
      expect.unreachable();
    } catch (e) {
      expect((e as Error).name).toBe("ConfigError");
    }
  });
});
