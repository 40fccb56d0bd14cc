import { describe, expect, it } from "vitest";
import { diff, RELATIVE_TOLERANCE, worstPair } from "./compare.js";

describe("diff", () => {
  it("reports the max abs difference and its size relative to the reference", () => {
    const d = diff(Float32Array.of(1, 2.5, -4), Float32Array.of(1, 2, -4));
    expect(d.maxAbsDiff).toBe(0.5);
    expect(d.relDiff).toBeCloseTo(0.5 / 4);
    expect(d.ok).toBe(false);
    expect(diff(Float32Array.of(1, 2), Float32Array.of(1, 2))).toEqual({ maxAbsDiff: 0, relDiff: 0, ok: true });
  });

  it("puts the line at 1e-3 relative", () => {
    expect(RELATIVE_TOLERANCE).toBe(1e-3);
    expect(diff(Float32Array.of(10.009), Float32Array.of(10)).ok).toBe(true);
    expect(diff(Float32Array.of(10.011), Float32Array.of(10)).ok).toBe(false);
  });

  it("fails NaN and a length mismatch", () => {
    expect(diff(Float32Array.of(1, NaN, 1), Float32Array.of(1, 1, 1))).toMatchObject({ maxAbsDiff: Infinity, ok: false });
    expect(diff(Float32Array.of(1), Float32Array.of(1, 1)).ok).toBe(false);
  });
});

describe("worstPair", () => {
  it("finds the two outputs that differ most", () => {
    const w = worstPair(new Map([["a", Float32Array.of(1, 1)], ["b", Float32Array.of(1.1, 1)], ["c", Float32Array.of(0.9, 1)]]));
    expect(new Set([w!.a, w!.b])).toEqual(new Set(["b", "c"]));
    expect(w!.diff.maxAbsDiff).toBeCloseTo(0.2, 5);
    expect(worstPair(new Map([["a", Float32Array.of(1)]]))).toBeUndefined();
  });
});
