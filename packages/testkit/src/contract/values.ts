// Values the contract checks build: float64 copies for the references, float32 tensors from numbers, strided host
// views and strided values made on the executor (so that kernels see every layout).
import { expect } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { stridedOn, type Harness } from "./harness.js";

export const f64 = (t: Tensor): Float64Array => Float64Array.from(t.toFloat32Array());
export const f32 = (data: ArrayLike<number>, shape: readonly number[]): Tensor =>
  Tensor.from(Float32Array.from(data), shape);
export const reversed = (rank: number): number[] => Array.from({ length: rank }, (_, i) => rank - 1 - i);

/** The values of `t` as a host view that is not contiguous: stored with its axes reversed, viewed back (rank >= 2). */
export function hostStrided(t: Tensor): Tensor {
  const rev = reversed(t.rank);
  return t.permute(rev).contiguous().permute(rev);
}

/** The values of `t` as a value made on the executor by a transpose: every axis strided, the last one included. */
export function onExecutor(h: Harness, t: Tensor, perm: readonly number[] = reversed(t.rank)): Promise<unknown> {
  return stridedOn(h, t, perm);
}

/** Asserts every element at `indices` is exactly 0 (either sign): what masking or ignoring promises, not "about 0". */
export function expectZeros(got: Tensor, indices: Iterable<number>, label: string): void {
  const a = got.toFloat32Array();
  for (const i of indices) expect(a[i] === 0, `${label}: element ${i} is ${a[i]}, not 0`).toBe(true);
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
