// The dropout op's counter-based generator, the one TypeScript implementation every executor uses (the CPU kernels,
// the host side of the wasm and WGSL kernels): whether element i is kept is a pure function of (seed, i), so every
// executor drops the same elements, in any order and in parallel. Spec: packages/executor-cpu/README.md, "The dropout
// generator". The AssemblyScript (executor-wasm/assembly/dropout.ts) and WGSL (executor-webgpu dropout.wgsl.ts) copies
// cannot import this file; their tests run them against it bit for bit. The float64 reference in
// @attngraph/testkit is written apart from this on purpose: it is the check, not a user.

/** MurmurHash3's 32-bit finaliser: a bijection on uint32 that mixes every input bit into every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * `dropoutBits` with the seed already mixed (`fmix32(seed)`), for loops that hoist it. The fused attention kernels use
 * this with i = the element's index in the [B, H, L, S] weights, so they drop exactly what the dropout kernel drops.
 */
export function mixedBits(mixedSeed: number, i: number): number {
  return fmix32((mixedSeed ^ Math.imul(i, 0x9e3779b9)) >>> 0);
}

/** The uint32 random bits of element `i` (row-major index in the output; taken mod 2³²) under `seed` (a uint32). */
export function dropoutBits(seed: number, i: number): number {
  return mixedBits(fmix32(seed), i);
}

/**
 * The seed a run's kernels use: `seed` with the run's dropout step folded in, seed XOR fmix32(step mod 2³²). Step 0
 * gives the seed itself (fmix32(0) = 0), and fmix32 being a bijection, distinct steps (mod 2³²) give distinct seeds:
 * a new mask per training step, the same on every executor for the same step. The runtime applies it to every
 * attribute declared `dropoutSeed` (the dropout op's seed, the fused attention's dropoutSeed).
 */
export function dropoutSeedAt(seed: number, step: number): number {
  return (seed ^ fmix32(step >>> 0)) >>> 0;
}

/** Elements whose bits are below this uint32 are dropped: floor(rate · 2³²), clamped to 2³² − 1. */
export function dropoutThreshold(rate: number): number {
  return Math.min(Math.floor(rate * 2 ** 32), 2 ** 32 - 1);
}

/** Whether element `i` survives dropout at `rate` under `seed`. */
export function dropoutKeep(seed: number, i: number, rate: number): boolean {
  return dropoutBits(seed, i) >= dropoutThreshold(rate);
}
