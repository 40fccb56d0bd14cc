// Long kernels in chunks (KernelCall.signal), the rules every executor follows, written once: a kernel's work is a
// sequence of steps, each reporting how much work it did. Without a signal, or when the whole call fits one chunk, the
// steps run back to back, synchronously, exactly as an unchunked kernel (small calls must not pay for cancellation).
// With a signal and more work than one chunk, the steps run in chunks of about `chunkWork` units; between chunks the
// kernel yields to the event loop and stops with a KernelAbortedError once the signal has fired (or with the error an
// executor's own `check` returns, e.g. wasm's "the module was replaced"). Work is counted in multiply-adds (element
// operations), never in time, so a call falls into the same chunks on every machine; and a chunk is whole independent
// rows or whole key blocks, so the numbers are those of an unchunked call, bit for bit. Each executor keeps only its
// chunk size and the wiring to its own kernel signature (executor-cpu/-wasm src/chunks.ts).
import { AttnGraphError, describe } from "@attngraph/tensor";
import type { KernelCall } from "./executor-contract.js";

/**
 * A promise that resolves after the event loop has had a turn (macrotask queue). On one thread, `controller.abort()`
 * from a timer or an event handler cannot run while a synchronous kernel or run holds the thread: a chunked kernel
 * (between chunks) and a run with a signal (between steps) yield with this. setImmediate where it exists (Node: runs
 * after pending I/O and timers), else a MessageChannel (browsers; not clamped like setTimeout).
 */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as { setImmediate?: (fn: () => void) => unknown };
  if (typeof g.setImmediate === "function") return new Promise((resolve) => g.setImmediate!(resolve));
  return new Promise((resolve) => {
    // Typed loosely: @types/node's MessagePort is the worker_threads one, browsers have the DOM one.
    const ch = new MessageChannel() as unknown as {
      port1: { onmessage: (() => void) | null; close(): void };
      port2: { postMessage(m: unknown): void };
    };
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}

/** A kernel stopped between two chunks because its call's signal fired; `cause` is the signal's reason. */
export class KernelAbortedError extends AttnGraphError {
  constructor(node: string, reason: unknown) {
    super("aborted", describe(node, "aborted between two chunks of the kernel"), { subject: node, cause: reason });
    this.name = "AbortError";
  }
}

/**
 * Called between two chunks, after the signal check: an error to stop the kernel with (the remaining steps never
 * run), or undefined to go on.
 */
export type ChunkCheck = () => unknown;

/** The call's signal when the call is worth chunking (`work` over one chunk), else undefined: run it in one go. */
export function chunkSignal(
  call: Pick<KernelCall<unknown>, "signal">,
  work: number,
  chunkWork: number,
): AbortSignal | undefined {
  return call.signal !== undefined && work > chunkWork ? call.signal : undefined;
}

/**
 * Runs `steps` (each yields the work it did) to the end: synchronously without a signal (returns undefined), else in
 * chunks of `chunkWork` units with a yield, a signal check and `check()` between them (returns a Promise; it rejects
 * with a KernelAbortedError once the signal has fired, or with what `check()` returned, and the remaining steps never
 * run).
 */
export function runSteps(
  steps: Iterator<number>,
  signal: AbortSignal | undefined,
  chunkWork: number,
  node: string,
  check?: ChunkCheck,
): Promise<void> | undefined {
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
      let stop: unknown;
      if (signal.aborted) stop = new KernelAbortedError(node, signal.reason);
      else if (check !== undefined) stop = check();
      if (stop !== undefined) {
        steps.return?.();
        throw stop;
      }
    }
  })();
}

/**
 * Steps over the rows [0, rows) of a kernel whose rows are independent: `part(start, end)` computes rows
 * [start, end), and each step is as many rows as make one chunk (at least one).
 */
export function* rowSteps(
  rows: number,
  rowWork: number,
  chunkWork: number,
  part: (start: number, end: number) => void,
): Generator<number, void, void> {
  const per = Math.max(1, Math.floor(chunkWork / Math.max(1, rowWork)));
  for (let r0 = 0; r0 < rows; r0 += per) {
    const r1 = Math.min(rows, r0 + per);
    part(r0, r1);
    yield (r1 - r0) * rowWork;
  }
}

/**
 * `part(start, end)` over rows [0, rows) of a kernel whose rows are independent: in one call when the call has no
 * signal or the work fits one chunk (undefined), else in chunks of whole rows with the checks of `runSteps` between
 * them (a Promise).
 */
export function overRows(
  call: Pick<KernelCall<unknown>, "signal" | "node">,
  chunkWork: number,
  rows: number,
  rowWork: number,
  part: (start: number, end: number) => void,
  check?: ChunkCheck,
): Promise<void> | undefined {
  const signal = chunkSignal(call, rows * rowWork, chunkWork);
  if (signal === undefined) {
    part(0, rows);
    return undefined;
  }
  return runSteps(rowSteps(rows, rowWork, chunkWork, part), signal, chunkWork, call.node, check);
}

/** `f()` now when nothing is pending, else once `pending` resolves: keeps a kernel synchronous when it did not chunk. */
export function afterwards<T>(pending: Promise<void> | undefined, f: () => T): T | Promise<T> {
  return pending === undefined ? f() : pending.then(f);
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
