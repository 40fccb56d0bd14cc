// The project's one small seeded generator: seeded weights (@attngraph/nn's init), test data, the demo's and the
// bench's inputs. A seed gives the same numbers on every JS engine, so a failure or a training run reproduces.

/** mulberry32: 32 bits of state, uniform floats in [0, 1) (multiples of 2⁻³²). Good enough for test data, not crypto. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
