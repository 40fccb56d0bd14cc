import { describe, expect, it } from "vitest";
import { dropoutBits, dropoutKeep, dropoutSeedAt, dropoutThreshold, fmix32, mixedBits } from "../index.js";

// The generator again, in BigInt arithmetic mod 2³², written from the spec without Math.imul or >>> so that a slip in
// the uint32 handling of dropout-hash.ts cannot be copied here. (The float64 reference in @attngraph/testkit is a third
// implementation; this package cannot import it, since testkit depends on graph.)
const M = 2n ** 32n;
function refFmix32(h: bigint): bigint {
  h ^= h >> 16n;
  h = (h * 0x85ebca6bn) % M;
  h ^= h >> 13n;
  h = (h * 0xc2b2ae35n) % M;
  h ^= h >> 16n;
  return h;
}
const refBits = (seed: number, i: number) =>
  Number(refFmix32(refFmix32(BigInt(seed)) ^ ((BigInt(i) * 0x9e3779b9n) % M)));

/** Seeds and counters across the uint32 range: the edges where signed/unsigned slips show, and a spread between. */
const EDGES = [0, 1, 2, 42, 1000, 0x7fffffff, 0x80000000, 0x80000001, 0xdeadbeef, 0xfffffffe, 0xffffffff];
const spread = (n: number, step: number) => Array.from({ length: n }, (_, k) => (k * step) % 2 ** 32);
const SEEDS = [...EDGES, ...spread(40, 0x9e3779b1)];
const COUNTERS = [...EDGES, ...spread(200, 0x2545f491), 123456789, 2 ** 31 - 1];

describe("dropout generator (the one TypeScript implementation)", () => {
  it("matches an independent BigInt implementation bit for bit over seeds and counters across the uint32 range", () => {
    const mismatches: string[] = [];
    for (const seed of SEEDS) {
      for (const i of COUNTERS) if (dropoutBits(seed, i) !== refBits(seed, i)) mismatches.push(`seed ${seed}, i ${i}`);
    }
    expect(mismatches).toEqual([]);
    // The sweep reaches both ends of the uint32 range, where a signed or truncated multiply would go wrong.
    expect(COUNTERS).toContain(0);
    expect(Math.max(...COUNTERS)).toBe(2 ** 32 - 1);
  });

  it("fmix32 and mixedBits agree with the BigInt implementation and return uint32 (never negative)", () => {
    for (const h of [...EDGES, ...spread(100, 0x6c8e9cf5)]) {
      expect(fmix32(h)).toBe(Number(refFmix32(BigInt(h))));
      expect(mixedBits(fmix32(h), 7)).toBe(refBits(h, 7));
    }
    expect(fmix32(0)).toBe(0); // the spec's note: seed 0 maps index 0 to bits 0
    // fmix32 is a bijection of uint32: distinct inputs, distinct outputs (a lost carry or sign would collide).
    const inputs = spread(1000, 0x1234567);
    expect(new Set(inputs.map((h) => fmix32(h))).size).toBe(new Set(inputs).size);
  });

  it("takes the counter mod 2³²: index 2³² + k has the bits of index k", () => {
    for (const k of [0, 1, 99]) expect(dropoutBits(5, 2 ** 32 + k)).toBe(refBits(5, k));
  });

  it("uses threshold floor(rate · 2³²), clamped to 2³² − 1, and keeps exactly the elements whose bits reach it", () => {
    expect(dropoutThreshold(0)).toBe(0);
    expect(dropoutThreshold(0.5)).toBe(2 ** 31);
    expect(dropoutThreshold(0.25)).toBe(2 ** 30);
    expect(dropoutThreshold(2 ** -32)).toBe(1);
    expect(dropoutThreshold(1 - 2 ** -53)).toBe(2 ** 32 - 1);
    for (const rate of [0, 0.1, 0.5, 0.9]) {
      const t = Math.floor(rate * 2 ** 32);
      for (const i of COUNTERS) expect(dropoutKeep(7, i, rate)).toBe(refBits(7, i) >= t);
    }
  });

  it("folds a run's dropout step into the seed: step 0 is the seed, other steps seed XOR fmix32(step mod 2³²)", () => {
    for (const seed of SEEDS) {
      expect(dropoutSeedAt(seed, 0)).toBe(seed);
      for (const step of [1, 2, 3, 1000, 2 ** 31, 2 ** 32 - 1, 2 ** 32 + 5]) {
        const want = Number(BigInt(seed) ^ refFmix32(BigInt(step) % M));
        expect(dropoutSeedAt(seed, step), `seed ${seed}, step ${step}`).toBe(want);
      }
    }
    // Distinct steps give distinct seeds (fmix32 is a bijection), so the first 1000 steps draw 1000 different masks.
    expect(new Set(Array.from({ length: 1000 }, (_, k) => dropoutSeedAt(42, k))).size).toBe(1000);
  });
});
