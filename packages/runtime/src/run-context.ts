// What one run carries from its start to its steps: decided before the first step, read by the step loop.
import type { Arena } from "@attngraph/graph";
import type { BufferPlan, Plan } from "@attngraph/scheduler";
import type { AnyTensor, Shape } from "@attngraph/tensor";
import type { Override } from "./overrides.js";
import type { Watcher } from "./taps.js";
import type { WeightLease } from "./weights.js";

/** A value of one run, on the executor that holds it. */
export type Held = { readonly executor: string; readonly value: unknown };

/** Everything one run needs, decided before its first step. */
export interface RunContext {
  readonly runId: number;
  /** The plan for this run's set of watched nodes. */
  readonly plan: Plan;
  readonly shapes: ReadonlyMap<string, Shape>;
  /** Steps whose symbolic "dim" attributes this run's binding made concrete: what their kernels get. */
  readonly attrs: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  readonly memory: BufferPlan;
  /** This run's arenas (from the pool), by executor. */
  readonly arenas: ReadonlyMap<string, Arena<unknown>>;
  /** The run's inputs by name (own keys only). */
  readonly inputs: ReadonlyMap<string, AnyTensor>;
  /** The weights this run started with (a later setWeights() does not change a run in flight). */
  readonly weights: WeightLease;
  /** Watched node → its subscribers, snapshotted before the run. */
  readonly watched: ReadonlyMap<string, readonly Watcher[]>;
  /** Patched node → its overrides in order (the session's patches, then the run's), snapshotted before the run. */
  readonly overrides: ReadonlyMap<string, readonly Override[]>;
  readonly signal: AbortSignal | undefined;
  readonly t0: number;
  /** The updated weights this run assigns (RunOptions.updates); undefined: all. */
  readonly applying: ReadonlySet<string> | undefined;
}
