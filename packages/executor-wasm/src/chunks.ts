// Long kernels in chunks (KernelCall.signal), as on the CPU executor (its chunks.ts; executors share no code but the
// graph package's, so this is a copy of the same rules): without a signal, or when the whole call fits one chunk, a
// kernel runs in one go, synchronously; with a signal and more work than one chunk, it calls the module over ranges of
// rows (or key blocks) of about `chunkWork` multiply-adds each, and between them yields to the event loop and stops
// with a KernelAbortedError once the signal has fired. While it waits, other kernels may run on the same module: a
// chunked kernel keeps nothing in the shared scratch or descriptors across a yield, and gives up if a trap elsewhere
// re-instantiated the module (its addresses would point into the new memory).
import { AttnGraphError, describe } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import type { WasmContext } from "./context.js";
import type { ChunkedWasmKernel } from "./executor.js";
import type { WasmValue } from "./value.js";
import { yieldToEventLoop } from "./yield.js";

/** Work per chunk, in multiply-adds: about 16 ms of the module's SIMD matmul (≈ 1.6·10¹⁰ multiply-adds/s, one core). */
export const DEFAULT_CHUNK_WORK = 2 ** 28;

/** A kernel stopped between two chunks because its call's signal fired; `cause` is the signal's reason. */
export class KernelAbortedError extends AttnGraphError {
  constructor(node: string, reason: unknown) {
    super("aborted", describe(node, "aborted between two chunks of the kernel"), { subject: node, cause: reason });
    this.name = "AbortError";
  }
}

/** The call's signal when the call is worth chunking (`work` over one chunk), else undefined: run it in one go. */
export function chunkSignal(call: KernelCall<WasmValue>, ctx: WasmContext, work: number): AbortSignal | undefined {
  return call.signal !== undefined && work > ctx.chunkWork ? call.signal : undefined;
}

/**
 * Runs `steps` (each yields the work it did) to the end: synchronously without a signal (returns undefined), else in
 * chunks of `ctx.chunkWork` with a yield, a signal check and a check that the module is the same between them (returns
 * a Promise; it rejects with a KernelAbortedError once the signal has fired, and the remaining steps never run).
 */
export function runSteps(ctx: WasmContext, steps: Iterator<number>, signal: AbortSignal | undefined, node: string): Promise<void> | undefined {
  if (signal === undefined) {
    while (!steps.next().done);
    return undefined;
  }
  const generation = ctx.generation;
  return (async () => {
    let done = 0;
    for (let r = steps.next(); !r.done; r = steps.next()) {
      done += r.value;
      if (done < ctx.chunkWork) continue;
      done = 0;
      await yieldToEventLoop();
      let stop: unknown;
      if (signal.aborted) stop = new KernelAbortedError(node, signal.reason);
      else if (ctx.generation !== generation) stop = reinstantiated(node);
      if (stop !== undefined) {
        steps.return?.();
        throw stop;
      }
    }
  })();
}

function reinstantiated(node: string): AttnGraphError {
  const what = "the wasm module was replaced (after a trap in another kernel) or disposed while this kernel waited between chunks";
  return new AttnGraphError("wasm-trap", describe(node, what), { subject: node });
}

/**
 * `part(start, end)` over rows [0, rows) of a kernel whose rows are independent: in one call when the call has no
 * signal or the work fits one chunk (undefined), else in chunks of whole rows with the checks of `runSteps` between
 * them (a Promise).
 */
export function overRows(call: KernelCall<WasmValue>, ctx: WasmContext, rows: number, rowWork: number, part: (start: number, end: number) => void): Promise<void> | undefined {
  const signal = chunkSignal(call, ctx, rows * rowWork);
  if (signal === undefined) {
    part(0, rows);
    return undefined;
  }
  const per = Math.max(1, Math.floor(ctx.chunkWork / Math.max(1, rowWork)));
  function* steps(): Generator<number, void, void> {
    for (let r0 = 0; r0 < rows; r0 += per) {
      const r1 = Math.min(rows, r0 + per);
      part(r0, r1);
      yield (r1 - r0) * rowWork;
    }
  }
  return runSteps(ctx, steps(), signal, call.node);
}

/**
 * Rows [r0, r1) of [B · H · L] (L = `nl` rows per batch and head) as `f(bh, i0, i1)`: for each flat (batch, head) index
 * bh whose rows meet the range, its rows [i0, i1) of L.
 */
export function headRows(r0: number, r1: number, nl: number, f: (bh: number, i0: number, i1: number) => void): void {
  for (let bh = Math.floor(r0 / Math.max(1, nl)); bh * nl < r1; bh++) f(bh, Math.max(0, r0 - bh * nl), Math.min(nl, r1 - bh * nl));
}

/** `then()` now when nothing is pending, else once `pending` resolves: keeps a kernel synchronous when it did not chunk. */
export function afterwards<T>(pending: Promise<void> | undefined, then: () => T): T | Promise<T> {
  return pending === undefined ? then() : pending.then(then);
}

/**
 * `run()`, then `cleanup()` once it is over: at once when it returns or throws, else when its Promise settles. For the
 * temporaries (a dense copy, a chunked call's own scratch) that must outlive every chunk.
 */
export function withCleanup(run: () => Promise<void> | undefined, cleanup: () => void): Promise<void> | undefined {
  let pending: Promise<void> | undefined;
  try {
    pending = run();
  } catch (e) {
    cleanup();
    throw e;
  }
  if (pending === undefined) {
    cleanup();
    return undefined;
  }
  return pending.finally(cleanup);
}

/**
 * Types a kernel function as a ChunkedWasmKernel. Its promise (synchronous without a signal) is kept by construction:
 * a built-in kernel answers with a Promise only through `overRows`/`runSteps` with a signal from `chunkSignal`.
 */
export function chunkedKernel(fn: (call: KernelCall<WasmValue>, ctx: WasmContext) => WasmValue | Promise<WasmValue>): ChunkedWasmKernel {
  return fn as ChunkedWasmKernel;
}
