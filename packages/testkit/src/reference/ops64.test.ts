// Hand-checked cases for the parts of ops64 that the golden cases do not reach: mask alignments with L != S, and
// softmax edge rows. (The golden cases prove the rest through attention64.test.ts.)
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { mask64, softmax64, weightedSum64 } from "./ops64.js";

/** Which keys each query row sees, as strings of "x" (visible) and "." (hidden), for B = H = 1. */
function visible(L: number, S: number, m: Parameters<typeof mask64>[5], pad?: number[]): string[] {
  const out = mask64(new Float64Array(L * S), 1, 1, L, S, m, pad && Float64Array.from(pad));
  return Array.from({ length: L }, (_, i) =>
    Array.from(out.subarray(i * S, i * S + S), (v) => (v === -Infinity ? "." : "x")).join(""),
  );
}

describe("mask64", () => {
  it("causal, top-left: query i is key position i", () => {
    expect(visible(2, 4, { causal: true, window: null, alignment: "top-left" })).toEqual(["x...", "xx.."]);
  });
  it("causal, bottom-right: the last query is the last key", () => {
    expect(visible(2, 4, { causal: true, window: null, alignment: "bottom-right" })).toEqual(["xxx.", "xxxx"]);
    expect(visible(3, 2, { causal: true, window: null, alignment: "bottom-right" })).toEqual(["..", "x.", "xx"]);
  });
  it("window: i - window < j <= i", () => {
    expect(visible(4, 4, { causal: true, window: 2, alignment: "top-left" })).toEqual(["x...", "xx..", ".xx.", "..xx"]);
  });
  it("key padding composes with causal by or", () => {
    expect(visible(3, 3, { causal: true, window: null, alignment: "top-left" }, [1, 0, 0])).toEqual([
      "...",
      ".x.",
      ".xx",
    ]);
  });
  it("a padding flag other than 0/1 is an error", () => {
    expect(() => visible(1, 2, { causal: false, window: null, alignment: "top-left" }, [0, 2])).toThrow(AttnGraphError);
  });
  it("leaves visible scores untouched", () => {
    const s = Float64Array.from([1.5, -2, 3, 4]);
    expect([...mask64(s, 1, 1, 2, 2, { causal: true, window: null, alignment: "top-left" })]).toEqual([
      1.5,
      -Infinity,
      3,
      4,
    ]);
  });
});

describe("softmax64", () => {
  it("matches the closed form with a scale", () => {
    const [a, b] = softmax64(Float64Array.from([1, 3]), 2, 0.5);
    expect(a).toBeCloseTo(1 / (1 + Math.E), 15);
    expect(b).toBeCloseTo(Math.E / (1 + Math.E), 15);
  });
  it("a fully masked row is zeros, a partly masked row has exact zeros", () => {
    expect([...softmax64(Float64Array.from([-Infinity, -Infinity, -Infinity, 0]), 2, 1)]).toEqual([0, 0, 0, 1]);
  });
  it("stays finite for scores of ±1000", () => {
    expect([...softmax64(Float64Array.from([1000, 1000, -1000, -1000]), 2, 1)]).toEqual([0.5, 0.5, 0.5, 0.5]);
  });
  it("a NaN makes its whole row NaN and no other row", () => {
    const out = softmax64(Float64Array.from([0, NaN, 0, 0]), 2, 1);
    expect([...out]).toEqual([NaN, NaN, 0.5, 0.5]);
  });
});

describe("weightedSum64", () => {
  it("a key weighed exactly 0 adds nothing, not even a NaN or ±∞ value; a weighed one still propagates it", () => {
    const dims = { B: 1, H: 1, Hkv: 1, L: 2, S: 3, D: 1 };
    const w = Float64Array.from([0.5, 0.5, 0, 0.25, 0.25, 0.5]); // query 0 does not see key 2, query 1 does
    expect([...weightedSum64(w, Float64Array.from([2, 4, NaN]), dims)]).toEqual([3, NaN]);
    expect([...weightedSum64(w, Float64Array.from([2, 4, Infinity]), dims)]).toEqual([3, Infinity]);
  });
});
