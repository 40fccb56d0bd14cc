import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { dropoutBits, dropoutImpl, dropoutKeep, dropoutKernel, dropoutThreshold, fmix32 } from "./dropout.js";

const run = (x: Tensor, attrs: Record<string, unknown>) => dropoutKernel({ kind: "dropout", node: "weights", attrs, inputs: [x], outShape: x.shape });

// The generator again, in BigInt arithmetic mod 2³², written without Math.imul or >>> so that a slip in the uint32
// handling of the kernel cannot be copied here.
const M = 2n ** 32n;
function refFmix32(h: bigint): bigint {
  h ^= h >> 16n;
  h = (h * 0x85ebca6bn) % M;
  h ^= h >> 13n;
  h = (h * 0xc2b2ae35n) % M;
  h ^= h >> 16n;
  return h;
}
const refBits = (seed: number, i: number) => Number(refFmix32(refFmix32(BigInt(seed)) ^ ((BigInt(i) * 0x9e3779b9n) % M)));

const ones = (n: number) => new Tensor(new Float32Array(n).fill(1), [n]);

describe("dropout generator", () => {
  it("matches an independent BigInt implementation bit for bit", () => {
    for (const seed of [0, 1, 42, 0x7fffffff, 0x80000000, 0xffffffff]) {
      for (const i of [0, 1, 2, 1000, 123456789, 2 ** 31, 2 ** 32 - 1]) expect(dropoutBits(seed, i)).toBe(refBits(seed, i));
    }
    expect(fmix32(0)).toBe(0);
    expect(fmix32(1)).toBe(Number(refFmix32(1n)));
  });

  it("pins the published test vectors (the README lists them for other executors)", () => {
    expect([0, 1, 2, 3].map((i) => dropoutBits(42, i))).toEqual([3118121311, 1867726200, 3231533055, 1591899333]);
    // Seed 0 maps index 0 to bits 0 (fmix32(0) = 0): element 0 is always dropped under seed 0. Part of the spec.
    expect([0, 1, 2, 3].map((i) => dropoutBits(0, i))).toEqual([0, 2462723854, 1020716019, 454327756]);
    expect([0, 1, 2, 3].map((i) => dropoutBits(0xffffffff, i))).toEqual([3807975093, 2159115811, 1733375546, 3755613047]);
  });

  it("uses threshold floor(rate · 2³²)", () => {
    expect(dropoutThreshold(0)).toBe(0);
    expect(dropoutThreshold(0.5)).toBe(2 ** 31);
    expect(dropoutThreshold(0.25)).toBe(2 ** 30);
    expect(dropoutThreshold(1 - 2 ** -53)).toBe(2 ** 32 - 1);
    expect(dropoutKeep(7, 5, 0)).toBe(true);
    expect(dropoutKeep(7, 5, 0.5)).toBe(dropoutBits(7, 5) >= 2 ** 31);
  });
});

describe("dropout kernel", () => {
  it("is the identity in eval mode and at rate 0", () => {
    const x = Tensor.from([1, 2, 3], [3]);
    expect(run(x, { rate: 0.5, seed: 1, training: false })).toBe(x);
    expect(run(x, { rate: 0, seed: 1, training: true })).toBe(x);
  });

  it("keeps element i iff dropoutKeep(seed, i, rate), scaled by fround(1 / (1 − rate)), else writes 0", () => {
    const rate = 0.3;
    const vals = Array.from({ length: 64 }, (_, i) => i / 7 - 3);
    const y = run(Tensor.from(vals, [8, 8]), { rate, seed: 9, training: true }).toArray();
    const scale = Math.fround(1 / (1 - rate));
    const x32 = Float32Array.from(vals);
    y.forEach((v, i) => expect(v).toBe(dropoutKeep(9, i, rate) ? Math.fround(x32[i]! * scale) : 0));
  });

  it("indexes by the row-major position in the output, also for a strided input", () => {
    const base = Tensor.from(Array.from({ length: 12 }, (_, i) => i + 1), [3, 4]);
    const t = base.transpose(0, 1); // [4, 3]
    const got = dropoutImpl(t, 0.5, 3);
    const want = dropoutImpl(t.contiguous(), 0.5, 3);
    expect(Array.from(got)).toEqual(Array.from(want));
  });

  it("gives the same mask for the same seed and a different one for another seed", () => {
    const x = ones(1000);
    const a = run(x, { rate: 0.5, seed: 123, training: true }).toArray();
    const b = run(x, { rate: 0.5, seed: 123, training: true }).toArray();
    const c = run(x, { rate: 0.5, seed: 124, training: true }).toArray();
    expect(a).toEqual(b);
    const differing = a.filter((v, i) => v !== c[i]).length;
    expect(differing).toBeGreaterThan(400); // about half differ for independent masks at rate 0.5
  });

  it.each([0.1, 0.5, 0.9])("keeps a fraction within 5 standard deviations of 1 − %s and preserves the mean", (rate) => {
    const n = 100_000;
    const y = run(ones(n), { rate, seed: 2024, training: true }).toArray();
    const kept = y.filter((v) => v !== 0).length;
    const sd = Math.sqrt(n * rate * (1 - rate));
    expect(Math.abs(kept - n * (1 - rate))).toBeLessThan(5 * sd);
    // Each output is Bernoulli(1 − rate) · 1/(1 − rate): mean 1, standard error sqrt(rate / (1 − rate) / n).
    const mean = y.reduce((s, v) => s + v, 0) / n;
    expect(Math.abs(mean - 1)).toBeLessThan(4 * Math.sqrt(rate / (1 - rate) / n));
  });

  it("rejects rate 1 and a seed outside uint32 with attr errors naming the node", () => {
    const x = ones(4);
    expect(() => run(x, { rate: 1, seed: 0, training: true })).toThrow(AttnGraphError);
    expect(() => run(x, { rate: 1, seed: 0, training: true })).toThrow(/weights\.rate/);
    expect(() => run(x, { rate: 0.5, seed: -1, training: true })).toThrow(/weights\.seed/);
    expect(() => run(x, { rate: 0.5, seed: 1.5, training: true })).toThrow(/weights\.seed/);
  });
});
