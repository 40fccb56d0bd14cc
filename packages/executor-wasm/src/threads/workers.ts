// The executor's worker threads: the pool over the current instance's shared memory, started (and restarted after a
// trap) in the background, stopped by dispose; how many threads run and why fewer than were asked for; and the
// parallel calls a kernel splits, over the pool or one by one on the host when none runs.
import type { KernelExports } from "../module.js";
import type { Instance } from "../instance.js";
import { ThreadPool, threadsUnavailable, type ThreadCall } from "./pool.js";

export class Workers {
  #pool: ThreadPool | undefined;
  /** Aborts the start in progress (dispose, a new instance after a trap). */
  #starting: AbortController | undefined;
  /** Why fewer threads run than were asked for, when known. */
  #reason: string | undefined;

  /** `requested`: the executor's `threads` option. */
  constructor(readonly requested: number) {}

  /** Whether the module must be the shared-memory one: threads asked for, and this host can run them. */
  shared(): boolean {
    const unavailable = this.requested > 1 ? threadsUnavailable() : undefined;
    if (unavailable !== undefined) this.#reason = unavailable;
    return this.requested > 1 && unavailable === undefined;
  }

  /** The pool running now, if any (none before start, after a loss, or while restarting). */
  get #running(): ThreadPool | undefined {
    return this.#pool !== undefined && this.#pool.lost === undefined ? this.#pool : undefined;
  }

  /** Threads running now (the host's included). */
  get threads(): number {
    return this.#running?.threads ?? 1;
  }

  /** Most calls one parallel job may hold. */
  get maxCalls(): number {
    return this.#running?.maxCalls ?? 1;
  }

  /** Asked for, running, and why fewer run (`disposed`: the executor's state, which says it first). */
  threading(disposed: boolean): { readonly requested: number; readonly threads: number; readonly reason?: string } {
    const running = this.threads;
    const why = () =>
      disposed
        ? "the executor is disposed"
        : (this.#reason ?? this.#pool?.lost ?? "workers not started yet (init() starts them)");
    const reason = running < this.requested ? why() : undefined;
    return { requested: this.requested, threads: running, ...(reason !== undefined ? { reason } : {}) };
  }

  /** The calls over the host and the workers (see ThreadPool.run); one by one here when no pool runs. Returns whether they were split. */
  run(calls: readonly ThreadCall[], exports: KernelExports): boolean {
    const here = (c: ThreadCall) => (exports[c.name] as (...a: number[]) => unknown)(...c.args);
    const pool = this.#running;
    if (pool === undefined || calls.length <= 1) {
      for (const c of calls) here(c);
      return false;
    }
    pool.run(calls, here);
    return true;
  }

  /**
   * Starts the workers over `inst`'s memory; a failure leaves one thread and the reason. stop() (dispose, a new
   * instance after a trap) aborts it at any of its awaits, and the workers spawned so far are terminated then.
   */
  async start(module: WebAssembly.Module, inst: Instance): Promise<void> {
    const starting = new AbortController();
    this.#starting = starting;
    try {
      const pool = await ThreadPool.start(module, inst.memory, inst.control, this.requested, starting.signal);
      // Aborted after the pool was ready but before this line ran: it is no longer wanted.
      if (starting.signal.aborted) pool.stop();
      else {
        this.#pool = pool;
        this.#reason = undefined;
      }
    } catch (e) {
      if (!starting.signal.aborted)
        this.#reason = `workers did not start (${e instanceof Error ? e.message : String(e)})`;
    } finally {
      if (this.#starting === starting) this.#starting = undefined;
    }
  }

  /** Stops the workers, those running and those still starting. */
  stop(): void {
    this.#starting?.abort();
    this.#starting = undefined;
    this.#pool?.stop();
    this.#pool = undefined;
  }
}
