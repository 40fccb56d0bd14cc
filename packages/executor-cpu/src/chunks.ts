// Long kernels in chunks (KernelCall.signal): the rules and the runner (runSteps, overRows, afterwards,
// KernelAbortedError) are the graph package's, shared by every executor (@attngraph/graph chunks.ts). What is the CPU
// executor's own: its chunk size, and the kernel signature that takes it.
import type { KernelCall } from "@attngraph/graph";
import type { Tensor } from "@attngraph/tensor";
import type { ChunkedCpuKernel } from "./executor.js";

/** Work per chunk, in multiply-adds: about 15 ms of the register-tiled matmul (≈ 2·10⁹ multiply-adds/s, one core). */
export const DEFAULT_CHUNK_WORK = 2 ** 25;

/**
 * Types a kernel function as a ChunkedCpuKernel. Its promise (synchronous without a signal) is kept by construction:
 * a built-in kernel answers with a Promise only through `overRows`/`runSteps` with a signal from `chunkSignal`.
 */
export function chunkedKernel(
  fn: (call: KernelCall<Tensor>, chunkWork?: number) => Tensor | Promise<Tensor>,
): ChunkedCpuKernel {
  return fn as ChunkedCpuKernel;
}
