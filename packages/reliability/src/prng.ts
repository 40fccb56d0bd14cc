// The seeded generator is the testkit's mulberry32 (one implementation for every package's tests), under the name
// this package uses: a case is its seed, so fast-check shrinks the seed, not 4k floats.
export { mulberry32 as prng } from "@attngraph/testkit";

/** `n` numbers uniform in [-scale, scale). */
export function uniform(n: number, scale: number, next: () => number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (next() * 2 - 1) * scale;
  return out;
}
