// A small seeded generator for the contract suite: Math.random would make a failure impossible to reproduce.
import { Tensor, sizeOf } from "@attngraph/tensor";
import { mulberry32 } from "../prng.js";

export interface Rng {
  /** Uniform in [0, 1). */
  uniform(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
}

/** Uniform and normal numbers from mulberry32 (../prng.ts, the project's one seeded generator). */
export function createRng(seed: number): Rng {
  const uniform = mulberry32(seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

/** A float32 tensor of `shape` filled by `fill` (default: standard normal). */
export function randomTensor(
  rng: Rng,
  shape: readonly number[],
  fill: (rng: Rng, i: number) => number = (r) => r.normal(),
): Tensor {
  return Tensor.from(
    Array.from({ length: sizeOf(shape) }, (_, i) => fill(rng, i)),
    shape,
  );
}
