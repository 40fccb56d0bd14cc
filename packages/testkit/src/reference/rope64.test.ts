// Properties that define RoPE, checked on the reference: rotations keep each pair's norm, the score of a rotated query
// and key depends only on their distance, position 0 is the identity, and the pairs are split-half (i, i + r/2).
import { describe, expect, it } from "vitest";
import { rope64 } from "./rope64.js";

const D = 8;
/** A deterministic vector [1, 1, 1, D]. */
const vec = (seed: number, d = D): Float64Array =>
  Float64Array.from({ length: d }, (_, k) => Math.sin(seed * 13.1 + k * 2.3));
const at = (x: Float64Array, p: number, r: number | null = null, base = 10000): Float64Array =>
  rope64(x, 1, 1, 1, x.length, { base, rotaryDim: r, positionOffset: p });
const dot = (a: Float64Array, b: Float64Array): number => a.reduce((s, v, k) => s + v * b[k]!, 0);

describe("rope64", () => {
  it("keeps the norm of every pair (i, i + D/2)", () => {
    const x = vec(1);
    const y = at(x, 37);
    for (let i = 0; i < D / 2; i++)
      expect(Math.hypot(y[i]!, y[i + D / 2]!)).toBeCloseTo(Math.hypot(x[i]!, x[i + D / 2]!), 12);
    expect([...y]).not.toEqual([...x]);
  });

  it("⟨rope(q, m), rope(k, n)⟩ depends only on m − n", () => {
    const q = vec(2);
    const k = vec(3);
    for (const r of [null, 4]) {
      const ref = dot(at(q, 5, r), at(k, 2, r));
      for (const shift of [1, 10, 1000]) expect(dot(at(q, 5 + shift, r), at(k, 2 + shift, r))).toBeCloseTo(ref, 9);
      expect(Math.abs(dot(at(q, 6, r), at(k, 2, r)) - ref)).toBeGreaterThan(1e-3); // a different distance, a different score
    }
  });

  it("position 0 is the identity; positionOffset is the position of row 0", () => {
    const x = vec(4);
    expect([...at(x, 0)]).toEqual([...x]);
    const rows = rope64(Float64Array.from([...x, ...x, ...x]), 1, 1, 3, D, {
      base: 10000,
      rotaryDim: null,
      positionOffset: 5,
    });
    expect([...rows.subarray(2 * D)]).toEqual([...at(x, 7)]);
  });

  it("pairs dim i with dim i + r/2 and rotates by p / base^(2i/r); dims past r are copied", () => {
    // x = e_1, D = 6, r = 4, base 100, p = 1: pair (1, 3) turns by 100^(−2/4) = 0.1.
    const y = at(Float64Array.from([0, 1, 0, 0, 7, 8]), 1, 4, 100);
    [0, Math.cos(0.1), 0, Math.sin(0.1), 7, 8].forEach((v, k) => expect(y[k]).toBeCloseTo(v, 15));
  });

  it("applies the same angles to every batch and head", () => {
    const x = vec(5);
    const y = rope64(Float64Array.from([...x, ...x, ...x, ...x]), 2, 2, 1, D, {
      base: 10000,
      rotaryDim: null,
      positionOffset: 3,
    });
    for (let row = 0; row < 4; row++) expect([...y.subarray(row * D, row * D + D)]).toEqual([...at(x, 3)]);
  });
});
