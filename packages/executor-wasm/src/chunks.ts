// Long kernels in chunks (KernelCall.signal): the rules and the runner are the graph package's, shared by every
// executor (@attngraph/graph chunks.ts: without a signal, or when the whole call fits one chunk, a kernel runs in one
// go, synchronously; with a signal and more work than one chunk, it calls the module over ranges of rows (or key
// blocks) of about `chunkWork` multiply-adds each, and between them yields to the event loop and stops with a
// KernelAbortedError once the signal has fired). What is the wasm executor's own, here: its chunk size, the wiring to
// `ctx.chunkWork`, and one more check between chunks. While a kernel waits, other kernels may run on the same module:
// a chunked kernel keeps nothing in the shared scratch or descriptors across a yield, and gives up if a trap elsewhere
// re-instantiated the module (its addresses would point into the new memory).
import { AttnGraphError, describe } from "@attngraph/tensor";
import * as shared from "@attngraph/graph";
import type { KernelCall } from "@attngraph/graph";
import type { WasmContext } from "./context.js";
import type { ChunkedWasmKernel } from "./executor.js";
import type { WasmValue } from "./value.js";

/** Work per chunk, in multiply-adds: about 16 ms of the module's SIMD matmul (≈ 1.6·10¹⁰ multiply-adds/s, one core). */
export const DEFAULT_CHUNK_WORK = 2 ** 28;

/** The call's signal when the call is worth chunking (`work` over one chunk of `ctx.chunkWork`), else undefined. */
export function chunkSignal(call: KernelCall<WasmValue>, ctx: WasmContext, work: number): AbortSignal | undefined {
  return shared.chunkSignal(call, work, ctx.chunkWork);
}

/**
 * The check between two chunks that the module is still the one the kernel started on: taken now, it answers an
 * error naming `node` once the module was replaced (after a trap in another kernel) or disposed.
 */
function sameModule(ctx: WasmContext, node: string): shared.ChunkCheck {
  const generation = ctx.generation;
  return () => (ctx.generation !== generation ? reinstantiated(node) : undefined);
}

function reinstantiated(node: string): AttnGraphError {
  const what =
    "the wasm module was replaced (after a trap in another kernel) or disposed while this kernel waited between chunks";
  return new AttnGraphError("wasm-trap", describe(node, what), { subject: node });
}

/** The graph package's `runSteps` in chunks of `ctx.chunkWork`, also giving up once the module was replaced. */
export function runSteps(
  ctx: WasmContext,
  steps: Iterator<number>,
  signal: AbortSignal | undefined,
  node: string,
): Promise<void> | undefined {
  return shared.runSteps(steps, signal, ctx.chunkWork, node, sameModule(ctx, node));
}

/** The graph package's `overRows` in chunks of `ctx.chunkWork`, also giving up once the module was replaced. */
export function overRows(
  call: KernelCall<WasmValue>,
  ctx: WasmContext,
  rows: number,
  rowWork: number,
  part: (start: number, end: number) => void,
): Promise<void> | undefined {
  return shared.overRows(call, ctx.chunkWork, rows, rowWork, part, sameModule(ctx, call.node));
}

/**
 * Rows [r0, r1) of [B · H · L] (L = `nl` rows per batch and head) as `f(bh, i0, i1)`: for each flat (batch, head) index
 * bh whose rows meet the range, its rows [i0, i1) of L.
 */
export function headRows(r0: number, r1: number, nl: number, f: (bh: number, i0: number, i1: number) => void): void {
  for (let bh = Math.floor(r0 / Math.max(1, nl)); bh * nl < r1; bh++)
    f(bh, Math.max(0, r0 - bh * nl), Math.min(nl, r1 - bh * nl));
}

/**
 * Types a kernel function as a ChunkedWasmKernel. Its promise (synchronous without a signal) is kept by construction:
 * a built-in kernel answers with a Promise only through `overRows`/`runSteps` with a signal from `chunkSignal`.
 */
export function chunkedKernel(
  fn: (call: KernelCall<WasmValue>, ctx: WasmContext) => WasmValue | Promise<WasmValue>,
): ChunkedWasmKernel {
  return fn as ChunkedWasmKernel;
}
