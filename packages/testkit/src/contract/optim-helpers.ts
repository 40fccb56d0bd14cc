// What the optimizer checks (optim-checks.ts, sgd-checks.ts) share: the step as a tensor, names as regular
// expressions, and the rule for invalid steps.
import { expect } from "vitest";
import { type AnyTensor, Tensor } from "@attngraph/tensor";
import { expectTypedError } from "./block-checks.js";
import { expectClose, expectExact, OP_TOL, thrown, type Harness } from "./harness.js";

/** The step t as a float32 tensor of shape [] or [1]. */
export const stepTensor = (t: number, shape: readonly number[]): Tensor => Tensor.from([t], shape);

/** `s` as a literal in a regular expression. */
export const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The invalid-step rule of adam-step and sgd-momentum: a step that is not an integer >= 1 (0, 1.5, -2, NaN) is a typed
 * error naming `<node>.step` (never "unsupported"), or all-NaN output where the step lives only on the device; never
 * finite numbers. A valid step (t = 2, `expected`) works before and after, so the executor stays usable. `inputs` are
 * the op's inputs before the step, which comes last; they are uploaded once, and every call reads the same values.
 */
export async function expectInvalidStepsRefused(
  h: Harness,
  c: { kind: string; attrs: object; node: string; shape: readonly number[]; expected: Float64Array },
  inputs: readonly AnyTensor[],
): Promise<void> {
  const values: unknown[] = [];
  for (const t of inputs) values.push(await h.upload(t));
  const run = async (step: Tensor) =>
    h.download(await h.dispatch(c.kind, c.attrs, [...values, await h.upload(step)], c.shape, c.node));
  const good = async (label: string): Promise<void> =>
    expectClose(await run(stepTensor(2, [1])), { shape: c.shape, data: c.expected }, OP_TOL, label);
  await good(`${c.kind} with a valid step, before the invalid ones`);
  const names = new RegExp(`${escapeRegex(c.node)}\\.step`);
  const size = c.shape.reduce((x, y) => x * y, 1);
  for (const [t, stepShape] of [
    [0, []],
    [1.5, [1]],
    [-2, [1]],
    [NaN, []],
  ] as const) {
    const label = `${c.kind} with step ${t} as [${stepShape}]`;
    let out: Tensor | undefined;
    const e = await thrown(async () => {
      out = await run(stepTensor(t, stepShape));
    });
    if (e !== undefined) {
      expectTypedError(e, label, names);
      expect((e as { code?: unknown }).code, `${label}: the error's code`).not.toBe("unsupported");
    } else {
      const got = out!.toFloat32Array();
      expect(got.length, `${label}: output size`).toBe(size);
      const finite = Array.from(got).filter((x) => !Number.isNaN(x));
      expect(finite, `${label}: neither a typed error naming ${c.node}.step nor all-NaN output`).toEqual([]);
    }
  }
  await good(`${c.kind} after the invalid steps`);
}

/**
 * An optimizer op whose result depends on the step (bias corrections, the first step's momentum buffer): at each step
 * of `steps` the output matches `reference(t)`, and the first two steps' outputs differ by more than `apart` somewhere.
 */
export async function expectStepDependence(
  h: Harness,
  c: { kind: string; attrs: object; shape: readonly number[]; steps: readonly number[]; apart: number },
  inputs: (step: Tensor) => readonly (AnyTensor | undefined)[],
  reference: (t: number) => Float64Array,
): Promise<void> {
  const { kind, attrs, shape, steps, apart } = c;
  const outs: Float32Array[] = [];
  for (const t of steps) {
    const out = await h.run(kind, attrs, inputs(stepTensor(t, [1])), shape);
    expectClose(out, { shape, data: reference(t) }, OP_TOL, `${kind} at t = ${t}`);
    outs.push(out.toFloat32Array());
  }
  expect(
    outs[0]!.some((x, i) => Math.abs(x - outs[1]![i]!) > apart),
    `t = ${steps[0]} and t = ${steps[1]} differ`,
  ).toBe(true);
}

/** `value` still holds `before`: an optimizer op wrote its result elsewhere, not over its input. */
export async function expectUnchanged(h: Harness, value: unknown, before: Tensor, label: string): Promise<void> {
  const got = await h.download(value);
  expectExact(
    got,
    { shape: before.shape, data: before.toFloat32Array() },
    `${label} is unchanged (no update in place)`,
  );
}
