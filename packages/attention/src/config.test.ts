// Config errors quote what the user gave; a value of any size must still make a short message (issue 11, item 10).
import { describe, expect, it } from "vitest";
import { ConfigError, normalizeConfig } from "./config.js";

const base = { dIn: 8, dOut: 8, numHeads: 2 };

function configError(raw: unknown): ConfigError {
  try {
    normalizeConfig(raw as never);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError, nothing was thrown");
}

describe("normalizeConfig errors stay short", () => {
  it("a 4 MB string value is quoted cut short", () => {
    const e = configError({ ...base, causal: "y".repeat(4_000_000) });
    expect(e.message.length).toBeLessThan(600);
    expect(e.message).toMatch(/^config\.causal: invalid value, expected true or false, got "y+…y+"$/);
    expect(e.got!.length).toBeLessThanOrEqual(120);
  });

  it("a 4 MB unknown key is cut in the subject and in got", () => {
    const e = configError({ ...base, ["k".repeat(4_000_000)]: 1 });
    expect(e.message.length).toBeLessThan(600);
    expect(e.message).toContain("…");
    expect(e.subject!.length).toBeLessThanOrEqual(120);
  });

  it("arrays, objects and BigInts are named, never serialised whole (JSON.stringify threw on a BigInt)", () => {
    expect(configError({ ...base, dIn: new Array(1_000_000).fill(1) }).got).toBe("an array of 1000000");
    expect(configError({ ...base, scale: { a: 1 } }).got).toBe("an object");
    expect(configError({ ...base, dIn: 8n }).got).toBe("8n");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(configError({ ...base, window: cyclic }).got).toBe("an object");
  });

  it("numbers are shown as numbers (NaN is not null)", () => {
    expect(configError({ ...base, scale: Number.NaN }).message).toBe(
      "config.scale: invalid scale, expected a finite number or null, got NaN",
    );
    expect(configError({ ...base, dropout: 1 }).got).toBe("1");
  });
});
