// What the optimizer tests (adam.test.ts, sgd.test.ts) share: the layouts each operand is tried in, the closeness check,
// and the step counts they feed adam-step and sgd-momentum (the ops whose step t is checked twice: on the host for an
// upload, in the shader for a value computed on the GPU).
import { expect } from "vitest";
import { type AnyTensor, Tensor, compare } from "@attngraph/tensor";
import type { GpuTensor } from "./gpu-tensor.js";
import type { GpuOps } from "./test-gpu.js";

export const TOL = { abs: 1e-5, rel: 1e-5 };
export const values = (t: AnyTensor): number[] => Array.from(t.toFloat32Array());

/** `got` within `tol` of `want` elementwise, NaN where NaN is expected. */
export function expectClose(got: Tensor, want: readonly number[], label: string, tol = TOL): void {
  const r = compare(got, want, tol, { equalNan: true });
  expect({ label, ok: r.ok, worst: r.worst, failures: r.failures }).toMatchObject({ ok: true });
}

export type Layout = "dense" | "permuted" | "spaced";
export const LAYOUTS: readonly Layout[] = ["dense", "permuted", "spaced"];

/** `t` as a GPU value in `layout`: uploaded, uploaded transposed and transposed back (perm reverses the axes), spaced. */
export async function layoutOf(ops: GpuOps, t: Tensor, layout: Layout): Promise<Tensor | GpuTensor> {
  if (layout === "dense") return t;
  if (layout === "permuted")
    return ops.permuted(
      t,
      t.shape.map((_, i) => t.rank - 1 - i),
    );
  return ops.spaced(t);
}

/** t computed on the GPU (t/2 + t/2): a value with no host copy, which only the shader can check. */
export function gpuStep(ops: GpuOps, t: number, shape: number[] = [1]): Promise<GpuTensor> {
  const half = Tensor.from([t / 2], shape);
  return ops.dispatch("add", {}, [half, half], shape);
}

/** Bad step counts from the host, each with the value its error reports: plain uploads, a spaced view, a slice. */
export async function badHostSteps(ops: GpuOps): Promise<[string, Tensor | GpuTensor, string][]> {
  return [
    ["0", Tensor.from([0], []), "0"],
    ["-1", Tensor.from([-1], [1]), "-1"],
    ["2.5", Tensor.from([2.5], [1]), "2.5"],
    ["NaN", Tensor.from([Number.NaN], []), "NaN"],
    ["Infinity", Tensor.from([Number.POSITIVE_INFINITY], []), "Infinity"],
    ["a spaced view of 0.5", await ops.spaced(Tensor.from([0.5], [1])), "0.5"],
    [
      "a slice at 2.5",
      await ops.dispatch("slice", { axis: 0, start: 2, size: 1 }, [Tensor.from([0, Number.NaN, 2.5, 3, -1], [5])], [1]),
      "2.5",
    ],
  ];
}

/** Bad step counts computed on the GPU (no host copy), which make every output element NaN. */
export async function badGpuSteps(ops: GpuOps): Promise<[string, GpuTensor][]> {
  const big = Tensor.from([3e38], [1]);
  return [
    ["0.5", await gpuStep(ops, 0.5)],
    ["2.5", await gpuStep(ops, 2.5, [])],
    ["0", await gpuStep(ops, 0)],
    ["-2", await gpuStep(ops, -2)],
    ["NaN", await gpuStep(ops, Number.NaN)],
    ["+Infinity", await ops.dispatch("add", {}, [big, big], [1])],
  ];
}
