// The suite's only door into an executor: `upload`, `dispatch`, `download` (and `supports`/`registerKernel` in the
// contract checks). It builds KernelCall objects the way the runtime does, and adds the checks every call deserves:
// the result has `outShape`, and the inputs are unchanged afterwards (an executor may share host memory on upload).
import { expect } from "vitest";
import { compare, formatShape, type AnyTensor, type Tensor, type Tolerance } from "@attngraph/tensor";
import type { Executor, KernelCall } from "@attngraph/graph";

/** What a float64 reference returns: dense row-major values and their shape. */
export interface Expected {
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
}

/** Single ops: float32 kernels against a float64 reference on inputs of magnitude ~1. */
export const OP_TOL: Tolerance = { abs: 1e-5, rel: 1e-5 };

export class Harness {
  // biome-ignore lint/suspicious/noExplicitAny: any executor, whatever its value type
  constructor(readonly executor: Executor<any>) {}

  upload(t: AnyTensor): Promise<unknown> {
    return Promise.resolve(this.executor.upload(t));
  }

  download(v: unknown): Promise<Tensor> {
    return Promise.resolve(this.executor.download(v));
  }

  /** One dispatch on executor values; `inputs` in the op's declared order, `undefined` for an absent optional. */
  async dispatch(
    kind: string,
    attrs: object,
    inputs: readonly unknown[],
    outShape: readonly number[],
    node = `contract.${kind}`,
  ): Promise<unknown> {
    const call: KernelCall<unknown> = { kind, node, attrs: attrs as Record<string, unknown>, inputs, outShape };
    return this.executor.dispatch(call);
  }

  /** Uploads host tensors, dispatches one op and downloads the result, checking its shape and the inputs' integrity. */
  async run(
    kind: string,
    attrs: object,
    inputs: readonly (AnyTensor | undefined)[],
    outShape: readonly number[],
  ): Promise<Tensor> {
    const before = inputs.map((t) => t?.toFloat32Array());
    const values = await Promise.all(inputs.map((t) => (t === undefined ? undefined : this.upload(t))));
    const out = await this.download(await this.dispatch(kind, attrs, values, outShape));
    expect(formatShape(out.shape), `${kind}: output shape`).toBe(formatShape(outShape));
    inputs.forEach((t, i) => {
      if (t)
        expect(sameBits(t.toFloat32Array(), before[i]!), `${kind}: input ${i} was modified by the kernel`).toBe(true);
    });
    return out;
  }
}

/**
 * `t` as a strided value on the executor: its elements uploaded in another order and viewed back through a `transpose`
 * dispatch, so the kernel under test really gets strides (uploading a permuted host tensor would not: a device
 * executor's upload writes it dense). `perm` is the transpose applied on the executor, its inverse is applied on the host.
 */
export async function stridedOn(h: Harness, t: Tensor, perm: readonly number[]): Promise<unknown> {
  const inverse = perm.map((_, i) => perm.indexOf(i));
  const base = t.permute(inverse).contiguous();
  return h.dispatch("transpose", { perm }, [await h.upload(base)], t.shape, "contract.strided");
}

/** Dispatches one op on executor values (uploaded or made by other dispatches) and downloads the result. */
export async function runValues(
  h: Harness,
  kind: string,
  attrs: object,
  values: readonly unknown[],
  outShape: readonly number[],
): Promise<Tensor> {
  const out = await h.download(await h.dispatch(kind, attrs, values, outShape));
  expect(formatShape(out.shape), `${kind}: output shape`).toBe(formatShape(outShape));
  return out;
}

/** Asserts `got` is within `tol` of `want` elementwise (NaN never matches a number), naming the worst element. */
export function expectClose(got: Tensor, want: Expected, tol: Tolerance, label: string): void {
  expect(formatShape(got.shape), `${label}: shape`).toBe(formatShape(want.shape));
  const r = compare(got, want.data, tol);
  const w = r.worst;
  const where = w
    ? `worst at ${indexOf(w.index, want.shape)}: got ${w.got}, expected ${w.expected}`
    : (r.shapeMismatch ?? "");
  expect(
    r.ok,
    `${label}: ${r.failures} of ${got.size} elements outside abs ${tol.abs} + rel ${tol.rel}; ${where}`,
  ).toBe(true);
}

/** Asserts identical float32 values (NaN equals NaN; 0 equals -0), naming the first difference. */
export function expectExact(got: Tensor, want: Expected, label: string): void {
  expect(formatShape(got.shape), `${label}: shape`).toBe(formatShape(want.shape));
  const a = got.toFloat32Array();
  const b = Float32Array.from(want.data);
  const i = a.findIndex((v, k) => !(v === b[k] || (Number.isNaN(v) && Number.isNaN(b[k]!))));
  expect(i, i < 0 ? "" : `${label}: first difference at ${indexOf(i, want.shape)}: got ${a[i]}, expected ${b[i]}`).toBe(
    -1,
  );
}

/** Runs `fn` and returns what it threw or rejected with; undefined if it returned. */
export async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A row-major index as a multi-index, for messages: 13 in [2, 3, 4] → [1, 0, 1]. */
export function indexOf(flat: number, shape: readonly number[]): string {
  const idx: number[] = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    idx.unshift(flat % shape[d]!);
    flat = Math.floor(flat / shape[d]!);
  }
  return `[${idx.join(", ")}]`;
}

function sameBits(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}
