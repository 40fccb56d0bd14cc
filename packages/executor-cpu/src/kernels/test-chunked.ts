// What the optimizer kernels' chunk tests share: each kernel called directly with a signal and a chunkWork of 1
// answers with a Promise, and its numbers are bit for bit those of one uninterrupted call.
import { expect } from "vitest";
import type { Tensor } from "@attngraph/tensor";
import type { ChunkedCpuKernel, UnsignalledCall } from "../executor.js";

/** Runs each kernel on its call in chunks (a signal, chunkWork 1) and uninterrupted, and expects the same bits. */
export async function expectChunksAsOneCall(
  runs: readonly (readonly [ChunkedCpuKernel, UnsignalledCall])[],
): Promise<void> {
  const signal = new AbortController().signal;
  for (const [kernel, call] of runs) {
    const pending = kernel({ ...call, signal }, 1);
    expect(pending, call.kind).toBeInstanceOf(Promise);
    expect(Array.from((await pending).toFloat32Array())).toEqual(Array.from((kernel(call) as Tensor).toFloat32Array()));
  }
}
