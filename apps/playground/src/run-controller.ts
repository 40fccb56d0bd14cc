// Re-runs on every config change with two guarantees: the newest config wins, and runs never interleave. A submit
// aborts the run in flight (through its AbortSignal) and waits for it to settle before the next one starts, so two
// runs never share the page's views, and configs submitted while waiting are dropped for the newest.

/** What one run reports back. A superseded run reports nothing but `onCancelled`, even if it finished anyway. */
export interface RunHandlers<C, R> {
  onStart?(config: C, id: number): void;
  onResult(result: R, config: C, id: number): void;
  onError(error: unknown, config: C, id: number): void;
  onCancelled?(config: C, id: number): void;
}

export type RunTask<C, R> = (config: C, signal: AbortSignal, id: number) => Promise<R>;

interface InFlight {
  readonly controller: AbortController;
  readonly id: number;
}

export class RunController<C, R> {
  readonly #task: RunTask<C, R>;
  readonly #handlers: RunHandlers<C, R>;
  #pending: { readonly config: C } | undefined;
  #current: InFlight | undefined;
  #ids = 0;
  #idle: (() => void)[] = [];

  constructor(task: RunTask<C, R>, handlers: RunHandlers<C, R>) {
    this.#task = task;
    this.#handlers = handlers;
  }

  /** Whether a run is in flight. */
  get running(): boolean {
    return this.#current !== undefined;
  }

  /** Runs `config` as soon as the run in flight (if any) has stopped; that run is aborted now. */
  submit(config: C): void {
    this.#pending = { config };
    if (this.#current)
      this.#current.controller.abort(new Error(`run ${this.#current.id} superseded by a newer config`));
    else this.#startNext();
  }

  /** Resolves once nothing is in flight or waiting. */
  idle(): Promise<void> {
    if (!this.#current && !this.#pending) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #startNext(): void {
    const next = this.#pending;
    this.#pending = undefined;
    if (!next) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    const flight: InFlight = { controller: new AbortController(), id: ++this.#ids };
    this.#current = flight; // set before the task starts: a task that fails synchronously still finds it
    void this.#run(flight, next.config);
  }

  async #run(flight: InFlight, config: C): Promise<void> {
    const { controller, id } = flight;
    try {
      this.#handlers.onStart?.(config, id);
      const result = await this.#task(config, controller.signal, id);
      if (controller.signal.aborted) this.#handlers.onCancelled?.(config, id);
      else this.#handlers.onResult(result, config, id);
    } catch (e) {
      if (controller.signal.aborted) this.#handlers.onCancelled?.(config, id);
      else this.#handlers.onError(e, config, id);
    } finally {
      if (this.#current === flight) this.#current = undefined;
      this.#startNext();
    }
  }
}
