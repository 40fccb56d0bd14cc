// The operand triples a three-input kernel's strided paths are tested on (the optimizer kernels' state, grad and param
// on the cpu and wasm): each operand strided in turn beside the others' dense ones, then all three.
import type { Tensor } from "@attngraph/tensor";
import type { SeededRandom } from "./chunked-calls.js";

/** x, y, z with each in turn, then all three, taken from `strided` (views of other layouts) instead of `dense`. */
export function eachStrided<T>([x, y, z]: readonly [T, T, T], [xT, yT, zT]: readonly [T, T, T]): [T, T, T][] {
  return [
    [xT, y, z],
    [x, yT, z],
    [x, y, zT],
    [xT, yT, zT],
  ];
}

/**
 * Three seeded operands of shape [a, b, c] (seeds seed, seed + 1, seed + 2), then strided twins of that shape (seeds
 * seed + 3 …), each a permuted tensor of another layout, so that each of the three strides its axes its own way.
 */
export function stridedOperands(
  random: SeededRandom,
  [a, b, c]: readonly [number, number, number],
  seed: number,
): [Tensor, Tensor, Tensor, Tensor, Tensor, Tensor] {
  const shape = [a, b, c];
  return [
    random(shape, seed),
    random(shape, seed + 1),
    random(shape, seed + 2),
    random([c, a, b], seed + 3).permute([1, 2, 0]),
    random([b, c, a], seed + 4).permute([2, 0, 1]),
    random([a, c, b], seed + 5).permute([0, 2, 1]),
  ];
}
