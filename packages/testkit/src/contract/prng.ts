// A small seeded generator for the contract suite: Math.random would make a failure impossible to reproduce.
import { Tensor, sizeOf } from "@attngraph/tensor";

export interface Rng {
  /** Uniform in [0, 1). */
  uniform(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
}

/** mulberry32: 32 bits of state, good enough for test data, identical on every JS engine. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const uniform = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

/** A float32 tensor of `shape` filled by `fill` (default: standard normal). */
export function randomTensor(rng: Rng, shape: readonly number[], fill: (rng: Rng, i: number) => number = (r) => r.normal()): Tensor {
  return Tensor.from(Array.from({ length: sizeOf(shape) }, (_, i) => fill(rng, i)), shape);
}
