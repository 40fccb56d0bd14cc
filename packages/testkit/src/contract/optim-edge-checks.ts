// Scalar and empty operands of the optimizer kernels (adam-moment, sgd-momentum, sgd-step), which the cpu and wasm
// tests each checked: a [] call gives the op's formula rounded once, bit for bit; an empty one keeps its shape. Each
// executor hands in its own run of the op on host tensors.
import { expect } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { adamMomentCase64, type AdamMomentCase } from "./adam-moment-case.js";
import type { SeededRandom } from "./chunked-calls.js";
import { sgdMomentumCase64, type SgdMomentumCase, type SgdStepCase } from "./optim-kernel-cases.js";

const scalar = (x: number): Tensor => Tensor.from([x], []);

/** `got`'s elements are `want` rounded once to float32, and so are those of the float64 reference. */
const expectRounded = (got: Tensor, want: number, reference: ArrayLike<number>): void => {
  expect(Array.from(got.toFloat32Array())).toEqual([Math.fround(want)]);
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(reference, Math.fround));
};

/** adam-moment of state 2, grad 3, param −1 (weightDecay 0.5, squared), and of an empty [2, 0]. */
export function expectAdamMomentScalarAndEmpty(
  run: (state: Tensor, grad: Tensor, param: Tensor | undefined, a: AdamMomentCase) => Tensor,
  random: SeededRandom,
): void {
  const a = { beta: 0.9, square: true, weightDecay: 0.5 };
  expectRounded(
    run(scalar(2), scalar(3), scalar(-1), a),
    0.9 * 2 + 0.1 * 2.5 * 2.5,
    adamMomentCase64([2], [3], [-1], a),
  );
  expect(run(random([2, 0], 1), random([2, 0], 2), undefined, { beta: 0.9 }).shape).toEqual([2, 0]);
}

/** sgd-momentum at step 2 of buf 2, grad 3, param −1 (dampening and weightDecay 0.5), and of an empty [2, 0]. */
export function expectSgdMomentumScalarAndEmpty(
  run: (buf: Tensor, grad: Tensor, param: Tensor | undefined, t: Tensor, a: SgdMomentumCase) => Tensor,
  random: SeededRandom,
): void {
  const a = { momentum: 0.9, dampening: 0.5, weightDecay: 0.5 };
  const got = run(scalar(2), scalar(3), scalar(-1), scalar(2), a);
  expectRounded(got, 0.9 * 2 + 0.5 * 2.5, sgdMomentumCase64([2], [3], [-1], 2, a));
  expect(run(random([2, 0], 1), random([2, 0], 2), undefined, scalar(2), { momentum: 0.9 }).shape).toEqual([2, 0]);
}

/** sgd-step (Nesterov) of param 2, grad 1, buf 4, and of an empty [0, 3]. */
export function expectSgdStepScalarAndEmpty(
  run: (param: Tensor, grad: Tensor, buf: Tensor | undefined, a: SgdStepCase) => Tensor,
  random: SeededRandom,
): void {
  const got = run(scalar(2), scalar(1), scalar(4), { lr: 0.5, momentum: 0.5, nesterov: true });
  expect(Array.from(got.toFloat32Array())).toEqual([2 - 0.5 * (1 + 2)]);
  expect(run(random([0, 3], 1), random([0, 3], 2), undefined, { lr: 1 }).shape).toEqual([0, 3]);
}
