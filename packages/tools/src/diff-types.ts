// The shapes of a per-node executor diff and of its repro: what diffExecutors returns and what a repro file holds.
import type { Executor, GraphJSON } from "@attngraph/graph";
import type { AnyTensor, Mismatch, Shape, Tolerance } from "@attngraph/tensor";
import type { TensorJSON } from "./tensor-json.js";

export interface DiffOptions {
  /** Two or more executors with different names; the first is the reference every other one is compared with. */
  readonly executors: readonly Executor[];
  readonly inputs: Readonly<Record<string, AnyTensor>>;
  readonly weights?: Readonly<Record<string, AnyTensor>>;
  /**
   * What is compared. "all" (default): every node, each a step of its own (no fusion), so a wrong kernel shows at its
   * own node. "none": only the graph's outputs, lowered as a user runs them (fused where possible). Or a list of nodes.
   */
  readonly tap?: "all" | "none" | readonly string[];
  /** Elementwise |got − ref| <= abs + rel · |ref|; default { abs: 1e-4, rel: 1e-4 }. NaN agrees with NaN. */
  readonly tolerance?: Tolerance;
  /** Whether to build a repro of the first disagreement (default true). */
  readonly repro?: boolean;
}

/** How one executor's value of one node compares with the reference's. */
export interface NodeComparison {
  readonly executor: string;
  /** The executor the node ran on in this executor's session: itself, or the reference where it has no kernel. */
  readonly ranOn: string;
  /**
   * "agree" / "disagree": compared (within tolerance or not). "unsupported": the executor has no kernel for the node,
   * which ran on the reference instead (`reason` says why), so there was nothing to compare. "failed": the run failed
   * at this node (`reason`: the error). "not-run": the run failed before reaching the node.
   */
  readonly status: "agree" | "disagree" | "unsupported" | "failed" | "not-run";
  /** max |got − ref| over the elements (Infinity where NaN or ±∞ differ); NaN when not compared. */
  readonly maxAbs: number;
  /** max |got − ref| / |ref| over the elements whose |ref| >= the tolerance's abs (smaller ones are judged by abs); NaN when not compared. */
  readonly maxRel: number;
  /** Elements out of tolerance. */
  readonly failures: number;
  readonly size: number;
  readonly worst?: Mismatch;
  readonly reason?: string;
}

/** One node of the diff: the reference's shape and every other executor's comparison. */
export interface NodeDiff {
  readonly node: string;
  readonly kind: string;
  readonly shape: Shape;
  readonly against: readonly NodeComparison[];
}

/** The first node (in graph order) where some executor disagrees beyond tolerance or failed. */
export interface FirstDisagreement {
  readonly node: string;
  readonly kind: string;
  readonly executor: string;
  /**
   * The node alone, run on the reference's values of its inputs on both executors: "disagrees" (the kernel itself),
   * "agrees" (the difference came from upstream differences each within tolerance, or from a fused chain under
   * `tap: "none"`), or "not-built" (`repro: false`).
   */
  readonly alone: "disagrees" | "agrees" | "not-built";
  /** The node alone as a self-contained replayable case (`replayRepro`, `attngraph run repro.json`). */
  readonly repro?: Repro;
}

export interface DiffResult {
  readonly reference: string;
  readonly executors: readonly string[];
  readonly tolerance: Tolerance;
  /** Every compared node, in graph order. */
  readonly nodes: readonly NodeDiff[];
  readonly first?: FirstDisagreement;
  /** No node disagrees and no run failed (unsupported nodes do not count against it). */
  readonly ok: boolean;
}

export const REPRO_FORMAT = "attngraph.repro";
export const REPRO_VERSION = 1;

/**
 * One node alone, with everything needed to run it again: a graph of that node (its inputs declared as graph inputs),
 * the input values the reference computed, and each executor's output (or the error it threw).
 */
export interface Repro {
  readonly format: typeof REPRO_FORMAT;
  readonly version: typeof REPRO_VERSION;
  readonly node: string;
  readonly kind: string;
  /** The executor compared against, and the one that disagreed. */
  readonly reference: string;
  readonly executor: string;
  readonly tolerance: Tolerance;
  readonly graph: GraphJSON;
  readonly inputs: Readonly<Record<string, TensorJSON>>;
  /** By executor name: the output of the node alone on the inputs above, or the error that run failed with. */
  readonly outputs: Readonly<Record<string, TensorJSON | { readonly error: string }>>;
  /** Where it came from (a case file, a graph), for the reader. */
  readonly source?: string;
}
