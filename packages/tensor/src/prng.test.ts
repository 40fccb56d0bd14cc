import { describe, expect, it } from "vitest";
import { mulberry32 } from "./prng.js";

// mulberry32 again in BigInt arithmetic mod 2³² (no Math.imul, no >>>), from Tommy Ettinger's C original:
//   z = (x += 0x6D2B79F5); z = (z ^ z >> 15) * (z | 1); z ^= z + (z ^ z >> 7) * (z | 61); return z ^ z >> 14;
const M = 2n ** 32n;
function* reference(seed: number): Generator<number> {
  let x = BigInt(seed >>> 0);
  for (;;) {
    x = (x + 0x6d2b79f5n) % M;
    let z = ((x ^ (x >> 15n)) * (x | 1n)) % M;
    z ^= (z + (z ^ (z >> 7n)) * (z | 61n)) % M;
    yield Number(z ^ (z >> 14n)) / 2 ** 32;
  }
}

describe("mulberry32", () => {
  it("gives the BigInt implementation's sequence, for seeds across the uint32 range", () => {
    for (const seed of [0, 1, 7, 12345, 0x7fffffff, 0x80000000, 0xffffffff]) {
      const next = mulberry32(seed);
      const ref = reference(seed);
      const got = Array.from({ length: 200 }, next);
      const want = Array.from({ length: 200 }, () => ref.next().value as number);
      expect(got, `seed ${seed}`).toEqual(want);
    }
  });

  it("takes the seed mod 2³² (a negative seed is its uint32) and stays in [0, 1) with mean 1/2", () => {
    expect(Array.from({ length: 5 }, mulberry32(-1))).toEqual(Array.from({ length: 5 }, mulberry32(0xffffffff)));
    const xs = Array.from({ length: 20_000 }, mulberry32(3));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(Math.abs(xs.reduce((a, x) => a + x, 0) / xs.length - 0.5)).toBeLessThan(0.01);
  });
});
