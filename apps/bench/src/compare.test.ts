import { describe, expect, it } from "vitest";
import { diff, diffEach, RELATIVE_TOLERANCE, worstPair } from "./compare.js";

describe("diff", () => {
  it("reports the max abs difference and its size relative to the reference", () => {
    const d = diff(Float32Array.of(1, 2.5, -4), Float32Array.of(1, 2, -4));
    expect(d.maxAbsDiff).toBe(0.5);
    expect(d.relDiff).toBeCloseTo(0.5 / 4);
    expect(d.ok).toBe(false);
    expect(diff(Float32Array.of(1, 2), Float32Array.of(1, 2))).toEqual({ maxAbsDiff: 0, relDiff: 0, ok: true });
  });

  it("puts the line at 1e-3 relative", () => {
    // Just inside and just outside RELATIVE_TOLERANCE of the reference's largest magnitude.
    expect(diff(Float32Array.of(10 * (1 + RELATIVE_TOLERANCE * 0.9)), Float32Array.of(10)).ok).toBe(true);
    expect(diff(Float32Array.of(10 * (1 + RELATIVE_TOLERANCE * 1.1)), Float32Array.of(10)).ok).toBe(false);
    expect(diff(Float32Array.of(10.009), Float32Array.of(10)).ok).toBe(true);
    expect(diff(Float32Array.of(10.011), Float32Array.of(10)).ok).toBe(false);
  });

  it("fails NaN and a length mismatch", () => {
    expect(diff(Float32Array.of(1, NaN, 1), Float32Array.of(1, 1, 1))).toMatchObject({
      maxAbsDiff: Infinity,
      ok: false,
    });
    expect(diff(Float32Array.of(1), Float32Array.of(1, 1)).ok).toBe(false);
  });
});

describe("diffEach (a training step's losses)", () => {
  it("holds each element to the tolerance relative to itself, so a small loss beside a large one is still checked", () => {
    // Losses of steps 1 and 2 of the block: the second, after one Adam step on L = sum(output ⊙ gradOutput), is far
    // larger. Relative to the largest (diff), a 1 % error in the first would pass; element by element it does not.
    const ref = Float32Array.of(-10.7, -14173);
    const off = Float32Array.of(-10.8, -14173);
    expect(diff(off, ref).ok).toBe(true);
    expect(diffEach(off, ref)).toMatchObject({ ok: false });
    expect(diffEach(off, ref).relDiff).toBeCloseTo(0.1 / 10.7, 6);
    expect(diffEach(off, ref).maxAbsDiff).toBeCloseTo(0.1, 5);
    expect(diffEach(Float32Array.of(-10.7001, -14173.5), ref).ok).toBe(true);
    expect(diffEach(Float32Array.of(NaN, -14173), ref)).toMatchObject({
      maxAbsDiff: Infinity,
      relDiff: Infinity,
      ok: false,
    });
    expect(diffEach(Float32Array.of(1), ref).ok).toBe(false);
    expect(diffEach(ref, ref)).toEqual({ maxAbsDiff: 0, relDiff: 0, ok: true });
  });

  it("is what worstPair uses when given", () => {
    const w = worstPair(
      new Map([
        ["a", Float32Array.of(1, 1000)],
        ["b", Float32Array.of(1.5, 1000)],
        ["c", Float32Array.of(1, 1001)],
      ]),
      diffEach,
    );
    expect(new Set([w!.a, w!.b])).toContain("b");
    expect(w!.diff.relDiff).toBeCloseTo(0.5, 5);
  });
});

describe("worstPair", () => {
  it("finds the two outputs that differ most", () => {
    const w = worstPair(
      new Map([
        ["a", Float32Array.of(1, 1)],
        ["b", Float32Array.of(1.1, 1)],
        ["c", Float32Array.of(0.9, 1)],
      ]),
    );
    expect(new Set([w!.a, w!.b])).toEqual(new Set(["b", "c"]));
    expect(w!.diff.maxAbsDiff).toBeCloseTo(0.2, 5);
    expect(worstPair(new Map([["a", Float32Array.of(1)]]))).toBeUndefined();
  });
});
