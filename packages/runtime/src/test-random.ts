// Seeded test data for this package's tests, so every run of a test file sees the same numbers.
import { Tensor } from "@attngraph/tensor";

/** Uniform numbers in [-1, 1) from a linear congruential generator seeded with `seed`. */
export function rand(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
}

export function randomTensor(shape: number[], seed: number): Tensor {
  const r = rand(seed);
  return Tensor.from(Array.from({ length: shape.reduce((a, b) => a * b, 1) }, r), shape);
}
