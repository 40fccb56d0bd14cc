// What a run and a session take beyond the graph: RunOptions (signal, overrides, dims, the run's own tap, dropout step,
// the weights it updates) and SessionOptions (memory limit, tap delivery, updates, numerics, validation, dropout).
import type { Override } from "./overrides.js";
import type { RunTap, TapPolicy } from "./taps.js";
import type { Validation } from "./validate.js";

export interface RunOptions {
  /**
   * Aborting rejects the run with an AbortError and emits a run-cancelled event: between steps, or inside a long step
   * on executors whose kernels work in chunks (cpu and wasm check the signal between chunks, see KernelCall.signal).
   */
  readonly signal?: AbortSignal;
  /**
   * Node → a tensor to use instead of its value in this run, or a function of the computed value (activation patching).
   * Applied after the session's own patches (`session.patch`); readers downstream and taps see the result.
   */
  readonly override?: Readonly<Record<string, Override>>;
  /**
   * Sizes of symbolic dims no input carries, by name: a decode graph's past length `P` (see `Decoder`, which passes it
   * on every call). A dim an input also binds must agree.
   */
  readonly dims?: Readonly<Record<string, number>>;
  /**
   * This run's own tap: `nodes` watched in this run only, each event handed to `next` before the run settles. Tools
   * that read one run's values (runWithCache) use it: a session tap sees every run started while it is subscribed.
   */
  readonly tap?: RunTap;
  /**
   * The dropout step this run draws its masks with (training-mode dropout: each seed is folded with it, see
   * `dropoutSeedAt`). Default: the run's index in the session (0 for its first run), so each run draws a new mask; the
   * trainer passes its step number. The same step gives the same masks on every executor.
   */
  readonly dropoutStep?: number;
  /**
   * The weights (of compile's `updates`) this run updates, by name; default every one. The nodes only the others need
   * are not run (the run's plan keeps only these updates): a trainer's micro steps of gradient accumulation update the
   * accumulators and compute no optimizer step.
   */
  readonly updates?: readonly string[];
}

/** What a session does beyond lowering: memory limit and tap delivery (see CompileOptions). */
export interface SessionOptions {
  readonly maxArenaBytes?: number;
  readonly taps?: Partial<TapPolicy>;
  /** Weight → the node whose value becomes it after each successful run (checked by compile(); see CompileOptions). */
  readonly updates?: ReadonlyMap<string, string>;
  /** Read back every computed value and fail at the first NaN or ±∞ (see CompileOptions). */
  readonly checkNumerics?: boolean;
  /** Run every step on a second executor too and compare (compile's validateWith, checked). */
  readonly validation?: Validation;
  /** "per-run" (default): each run draws new dropout masks; "fixed": every run the seed's own (see CompileOptions). */
  readonly dropoutMasks?: "per-run" | "fixed";
}
