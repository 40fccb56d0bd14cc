// What the optimizer kernels' tests (adam-moment, adam-step, sgd-momentum, sgd-step) share: operand triples with each
// operand strided in turn, the step inputs an optimizer refuses, and the pieces of a five-step training loop.
import { Tensor, type Shape } from "@attngraph/tensor";
import type { WasmExecutor } from "../executor.js";
import { random, uploadView } from "../test-util.js";
import type { WasmValue } from "../value.js";

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

/** The parameter shape of the optimizers' training-loop tests. */
export const LOOP_SHAPE: Shape = [4, 7];

/**
 * Step t of a training-loop test on `ex`: the gradient on the host (strided on even steps: a transposed [7, 4]), the
 * same as a value on `ex` (its own layout), and the step input t ([1] on odd steps, [] on even ones).
 */
export function loopStep(ex: WasmExecutor, t: number): { gHost: Tensor; g: WasmValue; s: WasmValue } {
  const gHost = t % 2 === 0 ? random([7, 4], 200 + t, 2).transpose(0, 1) : random(LOOP_SHAPE, 200 + t, 2);
  return { gHost, g: uploadView(ex, gHost), s: ex.upload(Tensor.from([t], t % 2 ? [1] : [])) };
}

/** Dispatches one optimizer op of a training loop on `ex` (its output LOOP_SHAPE). */
export const loopDispatch =
  (ex: WasmExecutor) =>
  (kind: string, node: string, attrs: Record<string, unknown>, inputs: (WasmValue | undefined)[]): WasmValue =>
    ex.dispatch({ kind, node, attrs, inputs, outShape: LOOP_SHAPE }) as WasmValue;

/** How far the parameter `p` on `ex` moved from its start `p0`: the largest |p − p0|. */
export function moved(ex: WasmExecutor, p: WasmValue, p0: Tensor): number {
  const start = p0.toFloat32Array();
  return ex
    .download(p)
    .toFloat32Array()
    .reduce((w, x, k) => Math.max(w, Math.abs(x - start[k]!)), 0);
}
