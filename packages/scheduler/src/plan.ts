import type { Executor, OpGraph, SymShape, ValueDecl } from "@attngraph/graph";

/** What a step does to memory: a strided view of its input, a copy into a new layout, or a computation. */
export type Layout = "view" | "copy" | "compute";

/** How a node came to its executor. */
export interface Placement {
  readonly executor: string;
  /** "override": the user placed it; "default": the first executor in preference order; "fallback": a preferred one said no. */
  readonly how: "override" | "default" | "fallback" | "follows-input";
  /** For a fallback: each skipped executor and its reason ("webgpu: window unsupported"). */
  readonly skipped: readonly string[];
}

/** One lowered step: a node, its inputs in the op's declared order, and where and how it runs. */
export interface PlanStep {
  /** The value this step produces (a graph node's name; a fused step takes the name of the chain's last node). */
  readonly node: string;
  readonly kind: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  /** Value names in the op's input order; `undefined` for an absent optional input. */
  readonly inputs: readonly (string | undefined)[];
  readonly shape: SymShape;
  readonly placement: Placement;
  readonly layout: Layout;
  /** Why the layout is what it is, for explain(). */
  readonly layoutNote: string;
  /** For a fused step: the graph nodes it stands for, in order. */
  readonly fused?: readonly string[];
}

/** What one lowering pass did, in words, for explain(). */
export interface PassReport {
  readonly pass: string;
  readonly summary: string;
}

/** A graph lowered for a set of executors and a set of watched nodes. Immutable; a Session runs it. */
export interface Plan {
  readonly graph: OpGraph;
  readonly steps: readonly PlanStep[];
  /** Executors by name, in preference order. */
  readonly executors: ReadonlyMap<string, Executor>;
  readonly inputs: readonly ValueDecl[];
  readonly weights: readonly ValueDecl[];
  readonly outputs: readonly string[];
  /** The nodes taps asked for when this plan was made: each is produced by a step of its own, never fused away. */
  readonly watched: ReadonlySet<string>;
  /** The watched nodes an override writes (a subset of `watched`). */
  readonly patched: ReadonlySet<string>;
  /** Nodes whose values outlive the run (LowerOptions.keep): never in a pooled arena. */
  readonly kept: ReadonlySet<string>;
  /** For each value, the index of the last step that reads it (outputs: steps.length), so it can be released after. */
  readonly lastUse: ReadonlyMap<string, number>;
  readonly passes: readonly PassReport[];
}
