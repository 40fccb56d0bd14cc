// What the harness needs from an implementation: set up once per shape (outside the timed region), then run.
import type { BenchProblem, ProblemKind } from "../problem.js";
import type { GpuAdapter } from "./webgpu.js";

export interface SetupOptions {
  /** Threads asked for on the command line; an implementation that cannot use them runs with what it can. */
  readonly threads: number;
}

/** An implementation set up for one problem. */
export interface Runner {
  /** Threads it actually runs with. */
  readonly threads: number;
  /** Anything the table should say about how this implementation runs (e.g. "threads unsupported in Node"). */
  readonly note?: string;
  /**
   * One forward on the problem's input, output [b, T, d] read back to the host (the read-back is timed too); for a
   * training problem one optimizer step, resolving to its loss (read back, as one element).
   */
  run(): Promise<Float32Array>;
  /**
   * Training runners: what the output check compares instead of the last run's output (which depends on how many steps
   * a runner has taken): the losses of its first two steps, the first from the initial weights (the forward), the
   * second after one update (the backward and Adam). Takes those steps first if the runner has not yet.
   */
  readonly checked?: () => Promise<Float32Array>;
  /**
   * attngraph only: ways to observe a run, for the event-stream overhead. Each subscribes and returns the
   * unsubscribe function.
   */
  readonly streams?: Readonly<Record<StreamMode, () => () => void>>;
  /**
   * WebGPU rows (the attngraph `webgpu` executor, `ort-webgpu`, `tfjs-webgpu`): the adapter the run used. On a software
   * adapter (SwiftShader) the row is correctness only: its output is checked, its times are not reported as figures.
   */
  readonly gpu?: GpuAdapter;
  /** attngraph only: peak planned bytes when the session's plan exposes them; undefined = "n/a". */
  readonly plannedPeakBytes?: number | undefined;
  dispose(): Promise<void>;
}

/** How an attngraph run is observed: `events$` subscribed, or every node tapped (`session.tap(() => true)`). */
export type StreamMode = "events$" | "tap-all";

export interface Impl {
  /** The name on the command line and in the results ("cpu", "tfjs-wasm", …). */
  readonly name: string;
  /** attngraph executors get the event-stream and planned-memory columns; peers get ratio columns. */
  readonly family: "attngraph" | "peer";
  /**
   * Whether it can run this problem (default: every one); one that cannot is left out of a run that names no
   * implementations, and is an "unavailable" row with this reason when named. E.g. onnxruntime: no training.
   */
  readonly unsupported?: (kind: ProblemKind) => string | undefined;
  /** Runs only when named in --impl (a variant for comparison, e.g. tfjs with its stock matMul gradients). */
  readonly onlyWhenNamed?: boolean;
  /** Loads what it needs (peers: a dynamic import, so a missing or broken package is one "unavailable" row) and sets up. */
  setup(problem: BenchProblem, options: SetupOptions): Promise<Runner>;
}
