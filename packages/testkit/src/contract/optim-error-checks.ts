// The typed errors of the optimizer kernels (adam-moment, adam-step, sgd-momentum, sgd-step) that the cpu and wasm
// tests each listed: every bad call names the node and the input or attribute at fault, with the error's code. The
// attribute tables are the union of what the two executors' tests refused. Each executor hands in its own failing
// call (host tensors on the cpu; uploaded and released after on wasm, which then checks nothing is left allocated).
import { expect } from "vitest";
import { Tensor, type AttnGraphError, type ErrorCode, type Shape } from "@attngraph/tensor";
import { thrownError } from "../helpers.js";
import { randomTensor } from "../random-tensor.js";
import { BAD_STEP_VALUES } from "./optim-kernel-cases.js";

/** One op at one node called with `attrs` on host `inputs` (an absent one undefined): the AttnGraphError it threw. */
export type FailingCall = (attrs: Record<string, unknown>, inputs: readonly (Tensor | undefined)[]) => AttnGraphError;

/** An executor's dispatch of one op on host tensors, returning its output (or throwing). */
export type HostDispatch = (
  kind: string,
  node: string,
  attrs: Record<string, unknown>,
  inputs: readonly (Tensor | undefined)[],
  outShape: Shape,
) => unknown;

/** A FailingCall of `kind` at `node` through `dispatch`, for an executor whose kernels take host tensors. */
export const failingCallOf =
  (dispatch: HostDispatch, kind: string, node: string, outShape: Shape): FailingCall =>
  (attrs, inputs) =>
    thrownError(() => dispatch(kind, node, attrs, inputs, outShape));

/** A bad call and the error it must be: [attrs, inputs, code, the field after `<node>.`]. */
type BadCall = readonly [Record<string, unknown>, readonly (Tensor | undefined)[], ErrorCode, string];

/** Every bad call fails with its code, naming `<node>.<field>` as the subject. */
function expectBadCalls(fail: FailingCall, node: string, calls: readonly BadCall[]): void {
  for (const [attrs, inputs, code, field] of calls) {
    const e = fail(attrs, inputs);
    expect([e.code, e.subject], `${JSON.stringify(attrs)} → ${code} ${field}`).toEqual([code, `${node}.${field}`]);
  }
}

/** Each of `attrs` is refused as an attr error naming its field, on `inputs` that are otherwise fine. */
const attrCalls = (
  inputs: readonly (Tensor | undefined)[],
  attrs: readonly (readonly [Record<string, unknown>, string])[],
): BadCall[] => attrs.map(([a, field]) => [a, inputs, "attr", field]);

/**
 * The step rule of adam-step and sgd-momentum, `before` being the op's inputs ahead of the step: a step that is not an
 * integer >= 1 is an input error naming `<node>.step` (in its message too); one of another shape than [] or [1] a shape
 * error; a missing one an input error.
 */
function expectStepErrors(
  fail: FailingCall,
  node: string,
  attrs: Record<string, unknown>,
  before: readonly (Tensor | undefined)[],
): void {
  for (const [t, shape] of BAD_STEP_VALUES) {
    const e = fail(attrs, [...before, Tensor.from([t], shape)]);
    expect([e.code, e.subject], `step ${t}`).toEqual(["input", `${node}.step`]);
    expect(e.message).toContain(`${node}.step`);
  }
  expectBadCalls(fail, node, [
    [attrs, [...before, Tensor.from([1, 2], [2])], "shape", "step"],
    [attrs, [...before, Tensor.from([1], [1, 1])], "shape", "step"],
    [attrs, [...before, undefined], "input", "step"],
  ]);
}

/** Three [2, 3] operands, and one of each wrong shape ([3, 2], [6]). */
const operands = (): { x: Tensor; y: Tensor; z: Tensor; transposed: Tensor; flat: Tensor } => ({
  x: randomTensor([2, 3], 1),
  y: randomTensor([2, 3], 2, 0.1),
  z: Tensor.from(randomTensor([2, 3], 3, 0.01).toArray().map(Math.abs), [2, 3]),
  transposed: randomTensor([3, 2], 4),
  flat: randomTensor([6], 4),
});

const step = (t: number): Tensor => Tensor.from([t], []);

/** adam-step's errors (a [2, 3] output): the step, m and v of other shapes, the attributes. */
export function expectAdamStepErrors(fail: FailingCall, node = "optim.w.update"): void {
  const { x: p, y: m, z: v, transposed, flat } = operands();
  expectStepErrors(fail, node, { lr: 1e-2 }, [p, m, v]);
  expectBadCalls(fail, node, [
    [{ lr: 1 }, [p, transposed, v, step(1)], "shape", "m"],
    [{ lr: 1 }, [p, m, flat, step(1)], "shape", "v"],
    ...attrCalls(
      [p, m, v, step(1)],
      [
        [{ lr: 0 }, "lr"],
        [{ lr: NaN }, "lr"],
        [{}, "lr"],
        [{ lr: 1, beta1: 1 }, "beta1"],
        [{ lr: 1, beta2: -0.5 }, "beta2"],
        [{ lr: 1, eps: -1 }, "eps"],
        [{ lr: 1, weightDecay: -1 }, "weightDecay"],
        [{ lr: 1, weightDecay: NaN }, "weightDecay"],
        [{ lr: 1, decoupled: "yes" }, "decoupled"],
        [{ lr: 1, decoupled: 1 }, "decoupled"],
      ],
    ),
  ]);
}

/** sgd-step's errors (a [2, 3] output): momentum without buf, grad and buf of other shapes, the attributes. */
export function expectSgdStepErrors(fail: FailingCall, node = "optim.w.update"): void {
  const { x: p, y: g, z: b, transposed, flat } = operands();
  expectBadCalls(fail, node, [
    [{ lr: 1, momentum: 0.9 }, [p, g, undefined], "input", "buf"],
    [{ lr: 1 }, [p, transposed], "shape", "grad"],
    [{ lr: 1, momentum: 0.9 }, [p, g, flat], "shape", "buf"],
    ...attrCalls(
      [p, g, b],
      [
        [{ lr: 0 }, "lr"],
        [{ lr: NaN }, "lr"],
        [{}, "lr"],
        [{ lr: 1, momentum: -1 }, "momentum"],
        [{ lr: 1, momentum: -0.5 }, "momentum"],
        [{ lr: 1, momentum: 0.9, nesterov: "yes" }, "nesterov"],
        [{ lr: 1, momentum: 0.9, nesterov: 1 }, "nesterov"],
        [{ lr: 1, nesterov: true }, "nesterov"],
        [{ lr: 1, momentum: 0, nesterov: true }, "nesterov"],
        [{ lr: 1, weightDecay: -1 }, "weightDecay"],
        [{ lr: 1, weightDecay: NaN }, "weightDecay"],
      ],
    ),
  ]);
}

/** sgd-momentum's errors (a [2, 3] output): the step, weight decay without param, shapes, the attributes. */
export function expectSgdMomentumErrors(fail: FailingCall, node = "optim.w.buf"): void {
  const { x: b, y: g, z: p, transposed, flat } = operands();
  expectStepErrors(fail, node, { momentum: 0.9 }, [b, g, undefined]);
  expectBadCalls(fail, node, [
    [{ momentum: 0.9, weightDecay: 0.1 }, [b, g, undefined, step(1)], "input", "param"],
    [{ momentum: 0.9 }, [b, transposed, undefined, step(1)], "shape", "grad"],
    [{ momentum: 0.9, weightDecay: 0.1 }, [b, g, flat, step(1)], "shape", "param"],
    ...attrCalls(
      [b, g, p, step(2)],
      [
        [{}, "momentum"],
        [{ momentum: -0.1 }, "momentum"],
        [{ momentum: -1 }, "momentum"],
        [{ momentum: NaN }, "momentum"],
        [{ momentum: Infinity }, "momentum"],
        [{ momentum: 0.9, dampening: 1.5 }, "dampening"],
        [{ momentum: 0.9, dampening: 2 }, "dampening"],
        [{ momentum: 0.9, dampening: -1 }, "dampening"],
        [{ momentum: 0.9, dampening: "0" }, "dampening"],
        [{ momentum: 0.9, weightDecay: -1 }, "weightDecay"],
        [{ momentum: 0.9, weightDecay: "0" }, "weightDecay"],
      ],
    ),
  ]);
}

/** adam-moment's errors (a [2, 3] output): weight decay without param, grad and param of other shapes, the attributes. */
export function expectAdamMomentErrors(fail: FailingCall, node = "optim.w.m"): void {
  const { x: s, y: g, z: p, transposed, flat } = operands();
  expectBadCalls(fail, node, [
    [{ beta: 0.9, weightDecay: 0.1 }, [s, g, undefined], "input", "param"],
    [{ beta: 0.9 }, [s, transposed], "shape", "grad"],
    [{ beta: 0.9, weightDecay: 0.1 }, [s, g, flat], "shape", "param"],
    ...attrCalls(
      [s, g, p],
      [
        [{ beta: 1 }, "beta"],
        [{ beta: -0.1 }, "beta"],
        [{ beta: NaN }, "beta"],
        [{}, "beta"],
        [{ beta: 0.9, square: 1 }, "square"],
        [{ beta: 0.9, square: "yes" }, "square"],
        [{ beta: 0.9, weightDecay: -1 }, "weightDecay"],
        [{ beta: 0.9, weightDecay: Infinity }, "weightDecay"],
      ],
    ),
  ]);
}
