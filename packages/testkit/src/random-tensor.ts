// Seeded test data: a tensor of uniform values in [-scale, scale), the same for the same seed.
import { Tensor, type Shape } from "@attngraph/tensor";
import { mulberry32 } from "./prng.js";

export const randomTensor = (shape: Shape, seed: number, scale = 1): Tensor => {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => scale * (next() * 2 - 1)),
    shape,
  );
};
