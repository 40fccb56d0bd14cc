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

/** The attention layer's dims that decide its weights' shapes. */
interface AttentionDims {
  readonly dIn: number;
  readonly dOut: number;
  readonly numHeads: number;
  readonly numKvHeads?: number;
}

/**
 * Raw weights of an attention layer by their PyTorch names (W_query, W_key, W_value, out_proj and, unless `bias` is
 * false, out_bias), each made by `make(shape, seed)` with seeds 1 to 5: the setup most of this package's tests share.
 */
export function rawAttentionWeights(
  c: AttentionDims,
  make: (shape: number[], seed: number) => Tensor = randomTensor,
  bias = true,
): Record<string, Tensor> {
  const dKv = (c.dOut / c.numHeads) * (c.numKvHeads ?? c.numHeads);
  return {
    W_query: make([c.dOut, c.dIn], 1),
    W_key: make([dKv, c.dIn], 2),
    W_value: make([dKv, c.dIn], 3),
    out_proj: make([c.dOut, c.dOut], 4),
    ...(bias ? { out_bias: make([c.dOut], 5) } : {}),
  };
}
