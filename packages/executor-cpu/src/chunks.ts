// Long kernels in chunks (KernelCall.signal): a kernel's work is a sequence of steps, each reporting how much work it
// did. Without a signal, or when the whole call fits one chunk, the steps run back to back, synchronously, exactly as
// an unchunked kernel (small calls must not pay for cancellation). With a signal and more work than one chunk, the
// steps run in chunks of about `chunkWork` units; between chunks the kernel yields to the event loop and stops with a
// KernelAbortedError once the signal has fired. Work is counted in multiply-adds (element operations), never in time,
// so a call falls into the same chunks on every machine; and a chunk is whole independent rows or whole key blocks, so
// the numbers are those of an unchunked call, bit for bit.
import { AttnGraphError, describe, type Tensor } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import type { ChunkedCpuKernel } from "./executor.js";
import { yieldToEventLoop } from "./yield.js";

/** Work per chunk, in multiply-adds: about 15 ms of the register-tiled matmul (≈ 2·10⁹ multiply-adds/s, one core). */
export const DEFAULT_CHUNK_WORK = 2 ** 25;

/** A kernel stopped between two chunks because its call's signal fired; `cause` is the signal's reason. */
export class KernelAbortedError extends AttnGraphError {
  constructor(node: string, reason: unknown) {
    super("aborted", describe(node, "aborted between two chunks of the kernel"), { subject: node, cause: reason });
    this.name = "AbortError";
  }
}

/** The call's signal when the call is worth chunking (`work` over one chunk), else undefined: run it in one go. */
export function chunkSignal(call: KernelCall<unknown>, work: number, chunkWork: number): AbortSignal | undefined {
  return call.signal !== undefined && work > chunkWork ? call.signal : undefined;
}

/**
 * Runs `steps` to the end: synchronously without a signal (returns undefined), else in chunks of `chunkWork` units
 * with a yield and a signal check between them (returns a Promise; it rejects with a KernelAbortedError once the signal
 * has fired, and the remaining steps never run).
 */
export function runSteps(steps: Iterator<number>, signal: AbortSignal | undefined, chunkWork: number, node: string): Promise<void> | undefined {
  if (signal === undefined) {
    while (!steps.next().done);
    return undefined;
  }
  return (async () => {
    let done = 0;
    for (let r = steps.next(); !r.done; r = steps.next()) {
      done += r.value;
      if (done < chunkWork) continue;
      done = 0;
      await yieldToEventLoop();
      if (signal.aborted) {
        steps.return?.();
        throw new KernelAbortedError(node, signal.reason);
      }
    }
  })();
}

/**
 * Steps over the rows [0, rows) of a kernel whose rows are independent: `part(start, end)` computes rows
 * [start, end), and each step is as many rows as make one chunk (at least one).
 */
function* rowSteps(rows: number, rowWork: number, chunkWork: number, part: (start: number, end: number) => void): Generator<number, void, void> {
  const per = Math.max(1, Math.floor(chunkWork / Math.max(1, rowWork)));
  for (let r0 = 0; r0 < rows; r0 += per) {
    const r1 = Math.min(rows, r0 + per);
    part(r0, r1);
    yield (r1 - r0) * rowWork;
  }
}

/**
 * `part` over rows [0, rows): in one call when the call has no signal or the work fits one chunk (undefined), else in
 * chunks with a signal check between them (a Promise, see `runSteps`).
 */
export function overRows(call: KernelCall<unknown>, chunkWork: number, rows: number, rowWork: number, part: (start: number, end: number) => void): Promise<void> | undefined {
  const signal = chunkSignal(call, rows * rowWork, chunkWork);
  if (signal === undefined) {
    part(0, rows);
    return undefined;
  }
  return runSteps(rowSteps(rows, rowWork, chunkWork, part), signal, chunkWork, call.node);
}

/** `f()` now when nothing is pending, else once `pending` resolves: keeps a kernel synchronous when it did not chunk. */
export function afterwards<T>(pending: Promise<void> | undefined, f: () => T): T | Promise<T> {
  return pending === undefined ? f() : pending.then(f);
}

/**
 * Types a kernel function as a ChunkedCpuKernel. Its promise (synchronous without a signal) is kept by construction:
 * a built-in kernel answers with a Promise only through `overRows`/`runSteps` with a signal from `chunkSignal`.
 */
export function chunkedKernel(fn: (call: KernelCall<Tensor>, chunkWork?: number) => Tensor | Promise<Tensor>): ChunkedCpuKernel {
  return fn as ChunkedCpuKernel;
}
