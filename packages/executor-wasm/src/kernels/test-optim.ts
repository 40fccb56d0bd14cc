// What the optimizer kernels' tests (adam-moment, adam-step, sgd-momentum, sgd-step) share: operand triples with each
// operand strided in turn, and the step inputs an optimizer refuses.
import { Tensor, type Shape } from "@attngraph/tensor";

/** x, y, z with each in turn, then all three, taken from `strided` (views of other layouts) instead of `dense`. */
export function eachStrided<T>([x, y, z]: readonly [T, T, T], [xT, yT, zT]: readonly [T, T, T]): [T, T, T][] {
  return [
    [xT, y, z],
    [x, yT, z],
    [x, y, zT],
    [xT, yT, zT],
  ];
}

const BAD_STEP_VALUES: readonly (readonly [number, Shape])[] = [
  [0, []],
  [1.5, [1]],
  [NaN, []],
  [-2, [1]],
  [Infinity, []],
];

/** Step inputs that are not an integer >= 1 (0, 1.5, NaN, −2, ∞), in both shapes a step may have, with their value. */
export const BAD_STEPS: readonly (readonly [number, Tensor])[] = BAD_STEP_VALUES.map(([t, shape]) => [
  t,
  Tensor.from([t], shape),
]);
