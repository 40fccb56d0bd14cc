// The records the harness produces: one row per implementation and shape, plus the event-stream overhead of the
// attngraph executors. bench-results.json is { meta, rows, streamOverhead, checks } with these shapes.
import type { StreamMode } from "./impls/types.js";
import type { ProblemKind } from "./problem.js";

export type RowStatus = "ok" | "mismatch" | "unavailable" | "failed";

/** The timing of one row, whatever the problem: who ran, at which shape, and the runs' times. */
export interface TimedRow {
  readonly impl: string;
  readonly family: "attngraph" | "peer";
  readonly b: number;
  readonly t: number;
  readonly d: number;
  readonly h: number;
  readonly threads: number;
  /** null when the row did not run (status unavailable or failed). */
  readonly medianMs: number | null;
  readonly minMs: number | null;
  /** Timed runs the median is over. */
  readonly runs: number;
  /** Every timed run, ms, in order. */
  readonly samplesMs: readonly number[];
  readonly warmupRuns: number;
  /** True when the per-row time budget stopped the timed runs before --runs. */
  readonly budgetLimited: boolean;
}

export interface ResultRow extends TimedRow {
  /** What one run computes (`--problem`): "attention" or "block" (a forward), "train-block" or "train-copy" (a step). */
  readonly problem: ProblemKind;
  /** FLOPs of one forward (causal count of the row's problem, see flops.ts) and the rate at the median. */
  readonly flops: number;
  readonly gflops: number | null;
  readonly status: RowStatus;
  /** For unavailable and failed rows. */
  readonly reason?: string;
  /** The implementation whose output this row was checked against (itself for the reference row). */
  readonly reference?: string;
  readonly maxAbsDiff?: number;
  readonly relDiff?: number;
  /**
   * The other implementations whose output differs from this one's by more than the tolerance. The row is a mismatch
   * when that is more than half of them.
   */
  readonly disagreesWith?: readonly string[];
  /**
   * attngraph only: peak planned bytes from the session's plan; null when the plan does not expose them. For a training
   * problem, the training step's arena (forward and backward intermediates, activations kept for the backward among them).
   */
  readonly plannedPeakBytes?: number | null;
  /** Training problems: the losses of the implementation's first two steps (what the check compares). */
  readonly losses?: readonly number[];
  readonly note?: string;
  /** WebGPU rows: the adapter the row ran on, e.g. "google swiftshader (SwiftShader driver 5.0.0)". */
  readonly adapter?: string;
  /**
   * Set when the row ran on a software adapter, saying which (e.g. "SwiftShader, software"): its output is checked like
   * any other row's, but its times (medianMs, samplesMs, gflops, kept here) are a CPU emulating a GPU, not GPU figures;
   * the printed report leaves them out.
   */
  readonly correctnessOnly?: string;
}

export interface OverheadRow {
  readonly impl: string;
  readonly b: number;
  readonly t: number;
  readonly d: number;
  readonly h: number;
  readonly threads: number;
  /** "none": no subscriber; the three modes are timed interleaved, run by run (so "none" is not the main row's number). */
  readonly mode: "none" | StreamMode;
  readonly medianMs: number;
  readonly runs: number;
  /** (medianMs − none's medianMs) / none's medianMs · 100. */
  readonly overheadPct: number;
  /** The output of this mode's last run against the row's output: max |Δ|, and whether within the tolerance. */
  readonly maxAbsDiff: number;
  readonly outputOk: boolean;
  /** As ResultRow.correctnessOnly: a software adapter's times, not printed. */
  readonly correctnessOnly?: string;
}

/** Per shape: which outputs were compared, against which reference, and the pair that differs most. */
export interface OutputCheck {
  readonly b: number;
  readonly t: number;
  readonly d: number;
  readonly h: number;
  readonly reference: string | null;
  readonly compared: readonly string[];
  readonly worstPair: {
    readonly a: string;
    readonly b: string;
    readonly maxAbsDiff: number;
    readonly relDiff: number;
  } | null;
}

export interface BenchResults {
  readonly meta: {
    readonly date: string;
    /** What one run computes (`--problem`). */
    readonly problem: ProblemKind;
    /** `--shape` was given to a problem with a fixed shape (train-copy) and ignored. */
    readonly shapeIgnored?: boolean;
    readonly node: string;
    readonly cpu: string;
    readonly cores: number;
    readonly threads: number;
    readonly runs: number;
    readonly warmup: number;
    /** The rows of a shape were timed in alternating rounds (--interleave). */
    readonly interleave: boolean;
    readonly budgetS: number;
    readonly minRuns: number;
    readonly tolerance: number;
    readonly flops: string;
  };
  readonly rows: readonly ResultRow[];
  readonly streamOverhead: readonly OverheadRow[];
  readonly checks: readonly OutputCheck[];
}
