/// <reference lib="dom" preserve="true" />
// The host side of the wasm executor's threads: `threads − 1` workers (worker-node.ts, worker-browser.ts, serve.ts), each with its own instance of the
// threaded module over the executor's shared memory, and a control block in that memory (control.ts). `run` posts
// a job's calls (each thread claims the next until none is left, the host too) and returns when every call is done,
// without waiting for a worker that took none: a kernel stays synchronous.
// Waiting: Atomics.wait where the thread may block (Node's main thread, workers), else polling (a browser page's main
// thread may not block). Kernels split their work so that each call writes its own part of the output, in the same
// order of operations as one call over the whole: threaded numbers equal single-threaded ones, bit for bit.
import {
  FAILED,
  MAX_CALLS,
  SEQ,
  STOP,
  controlWords,
  maxCalls,
  openJob,
  takeCalls,
  waitForCalls,
  writeCalls,
  type ThreadCall,
  type WorkerInit,
  type WorkerReply,
} from "./control.js";

export type { ThreadCall } from "./control.js";

interface WorkerHandle {
  terminate(): unknown;
}

/** Why threads cannot run here, or undefined when they can (shared memory, atomics and workers all present). */
export function threadsUnavailable(): string | undefined {
  const g = globalThis as unknown as {
    SharedArrayBuffer?: unknown;
    Atomics?: unknown;
    crossOriginIsolated?: boolean;
    Worker?: unknown;
    process?: { versions?: { node?: string } };
  };
  const node = g.process?.versions?.node !== undefined;
  if (!node && g.crossOriginIsolated !== true) {
    return "the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp), so it has no SharedArrayBuffer";
  }
  if (typeof g.SharedArrayBuffer !== "function" || typeof g.Atomics !== "object")
    return "this engine has no SharedArrayBuffer or Atomics";
  if (!node && typeof g.Worker !== "function") return "this environment has no Worker";
  return undefined;
}

/** Workers started and not yet gone (Node: counted down on their "exit" event; browsers: on terminate()). */
let live = 0;

/** How many pool workers of this thread are alive, every pool's together: what a test of dispose() waits to see reach 0. */
export function liveWorkers(): number {
  return live;
}

/**
 * Starts one worker on the package's worker entry (dist/threads/worker-node.js or worker-browser.js: the same path
 * from src/ and from dist/). The browser's is the literal `new Worker(new URL(…), { type: "module" })` that bundlers
 * (Vite, webpack, rolldown) recognise and bundle.
 */
async function spawn(
  onExit: (why: string) => void,
): Promise<{ handle: WorkerHandle; post(m: WorkerInit): void; reply: Promise<WorkerReply> }> {
  const g = globalThis as unknown as { process?: { versions?: { node?: string } } };
  if (g.process?.versions?.node !== undefined) {
    const { Worker } = await import("node:worker_threads");
    const w = new Worker(new URL("../../dist/threads/worker-node.js", import.meta.url));
    // An executor that is never disposed must not keep the process alive.
    w.unref();
    const reply = new Promise<WorkerReply>((resolve) => {
      w.once("message", (m: WorkerReply) => resolve(m));
      w.once("error", (e: Error) => resolve({ ready: false, error: e.message }));
    });
    live++;
    w.once("exit", (code: number) => {
      live--;
      onExit(`worker exited with code ${code}`);
    });
    return { handle: w, post: (m) => w.postMessage(m), reply };
  }
  const w = new Worker(new URL("../../dist/threads/worker-browser.js", import.meta.url), { type: "module" });
  const reply = new Promise<WorkerReply>((resolve) => {
    w.addEventListener("message", (e: MessageEvent) => resolve(e.data as WorkerReply), { once: true });
    w.addEventListener(
      "error",
      (e: ErrorEvent) => resolve({ ready: false, error: e.message || "worker failed to load" }),
      { once: true },
    );
  });
  live++;
  // A browser Worker has no exit event: it is gone once terminated (counted once, however often terminate() is called).
  let gone = false;
  const handle = {
    terminate() {
      if (!gone) live--;
      gone = true;
      w.terminate();
    },
  };
  return { handle, post: (m) => w.postMessage(m), reply };
}

/** `p`, or a rejection with the signal's reason as soon as it aborts (whichever comes first). */
function unlessAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

export class ThreadPool {
  readonly threads: number;
  readonly #ctl: Int32Array;
  readonly #workers: WorkerHandle[] = [];
  #canBlock: boolean;
  #lost: string | undefined;
  #stopped = false;

  private constructor(threads: number, ctl: Int32Array) {
    this.threads = threads;
    this.#ctl = ctl;
    // A browser page's main thread may not block in Atomics.wait (it throws); workers and Node may.
    this.#canBlock = typeof (globalThis as { document?: unknown }).document === "undefined";
  }

  /**
   * Starts `threads − 1` workers over `memory` (shared) with the control block at byte address `control`
   * (`controlWords(threads)` int32 words, zeroed). Rejects with the first worker's reason when one cannot start, and
   * with `signal`'s reason as soon as it aborts (while the workers load or while they instantiate the module). Either
   * way no worker is left running: those started so far are terminated, and one whose start was under way when the
   * pool gave up is terminated the moment it exists.
   */
  static async start(
    module: WebAssembly.Module,
    memory: WebAssembly.Memory,
    control: number,
    threads: number,
    signal?: AbortSignal,
  ): Promise<ThreadPool> {
    signal?.throwIfAborted();
    if (maxCalls(threads) > MAX_CALLS)
      throw new RangeError(`thread pool: ${threads} threads, at most ${Math.floor(MAX_CALLS / maxCalls(1))}`);
    const ctl = new Int32Array(memory.buffer, control, controlWords(threads));
    ctl.fill(0);
    // Made first, so that every worker belongs to it from the moment it exists: stop() reaches them all.
    const pool = new ThreadPool(threads, ctl);
    const stop = () => pool.stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const starting = Array.from({ length: threads - 1 }, async () => {
        const s = await spawn((why) => pool.lose(why));
        pool.#adopt(s.handle);
        return s;
      });
      const spawned = await unlessAborted(Promise.all(starting), signal);
      spawned.forEach((s, i) => s.post({ module, memory, slot: i + 1, threads, control }));
      const replies = await unlessAborted(Promise.all(spawned.map((s) => s.reply)), signal);
      const failed = replies.find((r): r is Extract<WorkerReply, { ready: false }> => !r.ready);
      if (failed !== undefined) throw new Error(`a worker could not start: ${failed.error}`);
      return pool;
    } catch (e) {
      pool.stop();
      throw e;
    } finally {
      signal?.removeEventListener("abort", stop);
    }
  }

  /** A worker just spawned joins the pool; one that comes after the pool stopped is terminated at once. */
  #adopt(worker: WorkerHandle): void {
    if (this.#stopped) void worker.terminate();
    else this.#workers.push(worker);
  }

  /** Why the pool stopped working (a worker exited), or undefined while it works. */
  get lost(): string | undefined {
    return this.#lost;
  }

  lose(why: string): void {
    this.#lost ??= why;
  }

  /** The most calls one job may hold (`CALLS_PER_THREAD` per thread). */
  get maxCalls(): number {
    return maxCalls(this.threads);
  }

  /**
   * Runs `calls` (at most `maxCalls`, writing disjoint memory, each with its own scratch) over every thread, the host
   * included: each thread claims the next call until none is left. Returns when all are done, whether or not every
   * worker took part (one still asleep when the host has run every call itself is not waited for). A call that throws
   * here is rethrown once the job's other calls are done; one that throws on a worker becomes a
   * WebAssembly.RuntimeError naming the kernel (a trap: the executor re-instantiates the module).
   */
  run(calls: readonly ThreadCall[], here: (call: ThreadCall) => void): void {
    if (calls.length > this.maxCalls)
      throw new Error(`thread pool: ${calls.length} calls in one job, at most ${this.maxCalls}`);
    const ctl = this.#ctl;
    writeCalls(ctl, calls);
    const seq = openJob(ctl, calls.length);
    let error: unknown;
    takeCalls(ctl, seq, (i) => {
      try {
        here(calls[i]!);
      } catch (e) {
        error ??= e;
      }
    });
    this.#canBlock = waitForCalls(ctl, calls.length, this.#canBlock);
    if (error !== undefined) throw error;
    const failed = Atomics.load(ctl, FAILED);
    if (failed > 0) {
      const names = [...new Set(calls.map((c) => c.name))].join(", ");
      throw new WebAssembly.RuntimeError(
        `${failed} call${failed > 1 ? "s" : ""} trapped on a worker thread (${names})`,
      );
    }
  }

  /** Stops the workers (they leave their loop, then are terminated); a second call does nothing. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    Atomics.store(this.#ctl, STOP, 1);
    Atomics.add(this.#ctl, SEQ, 1);
    Atomics.notify(this.#ctl, SEQ);
    this.lose("stopped");
    for (const w of this.#workers) void w.terminate();
  }
}
