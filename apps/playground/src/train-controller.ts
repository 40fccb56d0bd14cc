// Drives a training run step by step: start, pause (between steps: the step in flight finishes and counts), resume
// (the same trainer goes on from the next step), stop (the step in flight is aborted through its AbortSignal, which
// leaves the parameters as they were). One run at a time: start() stops the run before it, and waits for its trainer
// to be disposed, so two runs never share an executor or the page's views.

export type TrainState = "idle" | "starting" | "running" | "pausing" | "paused" | "done" | "stopped" | "error";

/** What the controller steps: one training step per call, resolving to its loss. */
export interface TrainLoop {
  step(signal: AbortSignal): Promise<number>;
  dispose(): Promise<void>;
}

export interface TrainHandlers<L extends TrainLoop> {
  /** Every change of state, with the steps finished so far. */
  onState?(state: TrainState, step: number): void;
  /** After each finished step (1 for the first), with the loop that ran it (to read its taps). */
  onStep(step: number, loss: number, loop: L): void;
  /** A run that failed (creating the trainer, a step, or disposing it); its state becomes "error". */
  onError(error: unknown): void;
}

interface Run {
  readonly abort: AbortController;
  step: number;
  pause: boolean;
  /** The trainer exists (creating it can take a while: compile, and on webgpu the pipelines). */
  started: boolean;
  wake: (() => void) | undefined;
  done: Promise<void>;
}

/**
 * Between two steps the loop gives the event loop a turn (a macrotask), so the page paints each step and a click on
 * Pause lands, even where a step runs entirely in microtasks.
 */
export const nextTask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export class TrainController<S, L extends TrainLoop> {
  readonly #create: (settings: S, signal: AbortSignal) => Promise<L>;
  readonly #handlers: TrainHandlers<L>;
  readonly #yield: () => Promise<void>;
  #run: Run | undefined;
  #state: TrainState = "idle";
  #step = 0;
  #starts = 0;

  constructor(
    create: (settings: S, signal: AbortSignal) => Promise<L>,
    handlers: TrainHandlers<L>,
    betweenSteps: () => Promise<void> = nextTask,
  ) {
    this.#create = create;
    this.#handlers = handlers;
    this.#yield = betweenSteps;
  }

  get state(): TrainState {
    return this.#state;
  }

  /** Steps finished by the current (or last) run. */
  get step(): number {
    return this.#step;
  }

  /**
   * Stops the run in flight (if any), then starts a new one of `steps` steps with a new trainer. Resolves once the new
   * run has begun (not when it ends: see `settled()`). Of several starts in a row, only the last one runs.
   */
  async start(settings: S, steps: number): Promise<void> {
    const ticket = ++this.#starts;
    await this.stop();
    if (ticket !== this.#starts) return;
    const run: Run = {
      abort: new AbortController(),
      step: 0,
      pause: false,
      started: false,
      wake: undefined,
      done: Promise.resolve(),
    };
    this.#run = run;
    this.#step = 0;
    this.#set("starting");
    run.done = this.#loop(run, settings, steps);
  }

  /** Pauses after the step in flight. False when nothing is running. */
  pause(): boolean {
    const run = this.#run;
    if (!run || run.pause) return false;
    run.pause = true;
    this.#set("pausing");
    return true;
  }

  /** Goes on with the same trainer. False when nothing is paused (or pausing). */
  resume(): boolean {
    const run = this.#run;
    if (!run?.pause) return false;
    run.pause = false;
    this.#set(run.started ? "running" : "starting");
    run.wake?.();
    return true;
  }

  /** Aborts the step in flight and ends the run; resolves once its trainer is disposed. */
  async stop(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    if (!run.abort.signal.aborted) run.abort.abort(new DOMException("training stopped", "AbortError"));
    run.wake?.();
    await run.done;
  }

  /** Resolves when the current run (if any) has ended: done, stopped or failed. */
  settled(): Promise<void> {
    return this.#run?.done ?? Promise.resolve();
  }

  #set(state: TrainState): void {
    this.#state = state;
    this.#handlers.onState?.(state, this.#step);
  }

  async #loop(run: Run, settings: S, steps: number): Promise<void> {
    let loop: L | undefined;
    let final: TrainState = "done";
    let error: unknown;
    try {
      loop = await this.#create(settings, run.abort.signal);
      run.started = true;
      if (!run.pause) this.#set("running");
      while (run.step < steps) {
        if (run.step > 0) await this.#yield();
        run.abort.signal.throwIfAborted();
        if (run.pause) {
          this.#set("paused");
          await new Promise<void>((wake) => (run.wake = wake));
          run.wake = undefined;
          continue; // stopped or paused again meanwhile: check both before the next step
        }
        const loss = await loop.step(run.abort.signal);
        run.abort.signal.throwIfAborted(); // stopped while the step ran: the run is over and the step is not shown
        this.#step = ++run.step;
        this.#handlers.onStep(run.step, loss, loop);
      }
    } catch (e) {
      if (run.abort.signal.aborted) final = "stopped";
      else (final = "error"), (error = e);
    }
    try {
      await loop?.dispose();
    } catch (e) {
      if (final !== "error") (final = "error"), (error = e);
    }
    if (this.#run === run) this.#run = undefined;
    if (final === "error") this.#handlers.onError(error);
    this.#set(final);
  }
}
