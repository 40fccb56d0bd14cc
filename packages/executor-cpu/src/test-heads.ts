// Seeded attention inputs in the layout the standard builder hands the kernels, shared by the attention tests.
import type { Tensor } from "@attngraph/tensor";
import { randomTensor } from "@attngraph/testkit";

/** [B, T, n, D] stored, seen as [B, n, T, D] (split heads, a strided view); seeded values in [-spread, spread). */
export const heads = (B: number, n: number, T: number, D: number, seed: number, spread = 1): Tensor =>
  randomTensor([B, T, n, D], seed, spread).permute([0, 2, 1, 3]);
