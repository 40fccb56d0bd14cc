// What `--problem flex` needs from an implementation: set up one variant and part at one shape (outside the timed
// region), then run. A row of its own kind, as the table has variant and part where the other problems have none.
import type { SetupOptions } from "../impls/types.js";
import type { RowStatus, TimedRow } from "../results.js";
import type { FlexProblem } from "./problem.js";
import type { FlexPart, FlexVariant } from "./variants.js";

export interface FlexCase {
  readonly variant: FlexVariant;
  readonly part: FlexPart;
}

export interface FlexRunner {
  readonly threads: number;
  readonly note?: string;
  /** attngraph: the session's planned peak for the run's input shapes (memoryPlan); undefined: no arena (n/a). */
  readonly plannedPeakBytes?: number | undefined;
  /** One forward, output read back: [b, T, d] (layer) or [b, H, T, D] (core). */
  run(): Promise<Float32Array>;
  /** attngraph: session.explain({ inputs }), for a look at what the plan fused. */
  readonly explain?: () => string;
  dispose(): Promise<void>;
}

export interface FlexImpl {
  readonly name: string;
  readonly family: "attngraph" | "peer";
  /** Runs only when named in --impl. */
  readonly onlyWhenNamed?: boolean;
  /** Throws to make an unavailable (peer) or failed (attngraph) row; FlexMemoryError: the row says memory. */
  setup(p: FlexProblem, c: FlexCase, options: SetupOptions): Promise<FlexRunner>;
}

/** One row of bench-results.json for `--problem flex`. */
/** A flex row: the timing every row has (medianMs null when it did not run: unavailable, failed, out of memory). */
export interface FlexRow extends TimedRow {
  readonly problem: "flex";
  readonly variant: FlexVariant;
  readonly part: FlexPart;
  /** attngraph rows: the planned arena of the run (null: n/a, or the row did not get that far); absent on peers. */
  readonly plannedPeakBytes?: number | null;
  readonly status: RowStatus;
  readonly reason?: string;
  /** Against the first implementation of the same variant, part and shape that produced an output. */
  readonly reference?: string;
  readonly maxAbsDiff?: number;
  readonly relDiff?: number;
  readonly disagreesWith?: readonly string[];
  readonly note?: string;
}
