// What the two layer-norm gradient tests (input and weight) both need: seeded inputs that may sit off 0 (the kernels'
// statistics are two-pass), each row's x̂ in float64 straight from the formula, and the closeness they hold to.
import { expect } from "vitest";
import { Tensor, compare, type Shape } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";

/** Seeded values in [shift − 1, shift + 1). */
export const rand = (shape: Shape, seed: number, shift = 0) => {
  const next = mulberry32(seed);
  return Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => shift + next() * 2 - 1),
    shape,
  );
};

/** Per row of x (its last axis, read in row-major order): x̂ = (x − mean) · rstd and rstd = 1/sqrt(biased var + eps). */
export function normalizedRows64(x: Tensor, eps: number): { readonly xh: number[]; readonly rstd: number }[] {
  const n = x.shape.at(-1)!;
  const xv = x.toArray();
  return Array.from({ length: xv.length / n }, (_, r) => {
    const row = xv.slice(r * n, r * n + n);
    const mean = row.reduce((a, b) => a + b, 0) / n;
    const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
    const rstd = 1 / Math.sqrt(variance + eps);
    return { xh: row.map((v) => (v - mean) * rstd), rstd };
  });
}

/** Within 1e-5 absolute or 1e-4 relative of the float64 reference. */
export const near = (got: Tensor, want: readonly number[]) => {
  const r = compare(got, want, { abs: 1e-5, rel: 1e-4 });
  expect(r.ok, JSON.stringify(r.worst)).toBe(true);
};
