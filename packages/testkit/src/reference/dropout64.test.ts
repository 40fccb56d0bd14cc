import { describe, expect, it } from "vitest";
import { referenceDropout, referenceDropoutBits, referenceDropoutKeep } from "./dropout64.js";

// The same generator in BigInt arithmetic: a second, differently written implementation of the spec, so a slip in the
// Math.imul / >>> 0 bookkeeping of dropout64.ts cannot pass unnoticed.
const M32 = 0xffffffffn;
function fmix32Big(h: bigint): bigint {
  h ^= h >> 16n;
  h = (h * 0x85ebca6bn) & M32;
  h ^= h >> 13n;
  h = (h * 0xc2b2ae35n) & M32;
  h ^= h >> 16n;
  return h;
}
const bitsBig = (seed: number, i: number): number =>
  Number(fmix32Big(fmix32Big(BigInt(seed)) ^ ((BigInt(i) * 0x9e3779b9n) & M32)));

describe("referenceDropout", () => {
  it("bits agree with a BigInt implementation of the spec", () => {
    for (const seed of [0, 1, 42, 0x7fffffff, 0xdeadbeef, 0xffffffff]) {
      for (const i of [0, 1, 2, 511, 65_536, 0x7fffffff, 0xffffffff])
        expect(referenceDropoutBits(seed, i), `seed ${seed}, i ${i}`).toBe(bitsBig(seed, i));
    }
  });

  it("keeps every element at rate 0 and the expected share at rate 0.3", () => {
    let kept = 0;
    for (let i = 0; i < 100_000; i++) {
      expect(referenceDropoutKeep(7, i, 0)).toBe(true);
      if (referenceDropoutKeep(7, i, 0.3)) kept++;
    }
    expect(Math.abs(kept / 100_000 - 0.7)).toBeLessThan(0.01);
  });

  it("a seed's mask is the BigInt implementation's (threshold 2³¹ at rate 0.5), and another seed's differs", () => {
    const mask = (keep: (i: number) => boolean) => Array.from({ length: 256 }, (_, i) => (keep(i) ? 1 : 0)).join("");
    for (const seed of [1, 2, 0xffffffff])
      expect(
        mask((i) => referenceDropoutKeep(seed, i, 0.5)),
        `seed ${seed}`,
      ).toBe(mask((i) => bitsBig(seed, i) >= 2 ** 31));
    const [a, b] = [mask((i) => referenceDropoutKeep(1, i, 0.5)), mask((i) => referenceDropoutKeep(2, i, 0.5))];
    const differing = [...a].filter((c, i) => c !== b[i]).length;
    expect(differing).toBeGreaterThan(256 / 4); // independent masks at rate 0.5 differ in about half the places
  });

  it("scales kept values by float32(1/(1-rate)) with one float32 rounding, drops to 0", () => {
    const x = [0.1, -3.7, 12.25, 1e-3, 5, 6, 7, 8];
    const out = referenceDropout(x, 3, 0.25);
    const scale = Math.fround(1 / 0.75);
    x.forEach((v, i) =>
      expect(out[i]).toBe(referenceDropoutKeep(3, i, 0.25) ? Math.fround(Math.fround(v) * scale) : 0),
    );
    expect(out.some((v) => v === 0)).toBe(true);
  });
});
