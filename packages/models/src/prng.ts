// The sampler's random numbers: a seeded generator written here, not Math.random, so a seed gives the same tokens on
// every executor and every JS engine for the same logits.

/** splitmix32 (a 32-bit splitmix variant): uniform numbers in [0, 1) from a seed taken modulo 2^32. */
export function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z ^= z >>> 15;
    return (z >>> 0) / 4294967296;
  };
}
