// The executor diff as the page tells it: one row per node (status, max abs and rel error, where it ran), the class
// that colours the node in the graph view, the summary and first-disagreement lines, and the checks on what the user
// picked. Pure: no DOM, so it is unit-tested on DiffResults made by hand.
import type { DiffResult, FirstDisagreement, NodeComparison } from "@attngraph/tools";
import type { PlaygroundConfig } from "./playground-config.js";
import { formatValue } from "./tensor-stats.js";

export type DiffStatus = NodeComparison["status"];

export const DIFF_STATUSES: readonly DiffStatus[] = ["agree", "disagree", "unsupported", "failed", "not-run"];

export interface DiffRow {
  readonly node: string;
  readonly kind: string;
  readonly status: DiffStatus;
  /** As printed: 6 significant digits, "—" where nothing was compared. */
  readonly maxAbs: string;
  readonly maxRel: string;
  readonly ranOn: string;
  /** Why a node was not compared or failed, in the library's words. */
  readonly reason: string | undefined;
}

/** A diff the page cannot start: the same executor on both sides, or no finished run to take the graph from. */
export class DiffSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DiffSetupError";
  }
}

/** The class a node of the graph view (and its table row) gets for its status: `diff-agree`, `diff-disagree`, … */
export function statusClass(status: DiffStatus): string {
  return `diff-${status}`;
}

const measured = (v: number) => (Number.isNaN(v) ? "—" : formatValue(v));

/** The page diffs two executors, so each node has one comparison: the second executor's against the reference's. */
function comparisonOf(node: string, against: readonly NodeComparison[]): NodeComparison {
  if (against.length !== 1)
    throw new RangeError(`diff of node ${node}: expected one comparison (two executors), got ${against.length}`);
  return against[0]!;
}

export function diffRows(result: DiffResult): DiffRow[] {
  return result.nodes.map((n) => {
    const c = comparisonOf(n.node, n.against);
    return {
      node: n.node,
      kind: n.kind,
      status: c.status,
      maxAbs: measured(c.maxAbs),
      maxRel: measured(c.maxRel),
      ranOn: c.ranOn,
      reason: c.reason,
    };
  });
}

/** Node → status, for colouring the graph view. */
export function nodeStatuses(result: DiffResult): Map<string, DiffStatus> {
  return new Map(result.nodes.map((n) => [n.node, comparisonOf(n.node, n.against).status]));
}

export function statusCounts(result: DiffResult): Record<DiffStatus, number> {
  const counts = Object.fromEntries(DIFF_STATUSES.map((s) => [s, 0])) as Record<DiffStatus, number>;
  for (const s of nodeStatuses(result).values()) counts[s]++;
  return counts;
}

/** "wasm against cpu: 9 of 9 nodes agree within abs 0.0001, rel 0.0001", then the other statuses' counts. */
export function diffSummary(result: DiffResult): string {
  const counts = statusCounts(result);
  const other = result.executors.filter((e) => e !== result.reference).join(", ");
  const rest = (
    [
      ["disagree", "disagree"],
      ["failed", "failed"],
      ["not-run", "not run (the run failed before them)"],
      ["unsupported", `unsupported (ran on ${result.reference}, not compared)`],
    ] as const
  )
    .filter(([s]) => counts[s] > 0)
    .map(([s, words]) => `${counts[s]} ${words}`);
  return `${other} against ${result.reference}: ${counts.agree} of ${result.nodes.length} nodes agree within abs ${result.tolerance.abs}, rel ${result.tolerance.rel}${rest.length ? `; ${rest.join(", ")}` : ""}`;
}

/** The first node that disagrees (or failed), and whether it still does when run alone. */
export function firstLine(result: DiffResult): string {
  const first = result.first;
  if (!first) return "no node disagrees: there is nothing to reproduce";
  const status = result.nodes
    .find((n) => n.node === first.node)
    ?.against.find((c) => c.executor === first.executor)?.status;
  const lead = `first ${status === "failed" ? "failure" : "disagreement"}: node ${first.node} (${first.kind}) on ${first.executor}`;
  const alone: Record<FirstDisagreement["alone"], string> = {
    disagrees: `run alone on ${result.reference}'s values of its inputs, it still disagrees: the kernel itself differs`,
    agrees: `run alone on ${result.reference}'s values of its inputs, it agrees: the difference built up upstream, each step within tolerance`,
    "not-built": "no repro was built",
  };
  return `${lead}; ${alone[first.alone]}`;
}

/** The repro's download name: `repro-<node>-<executor>.json`, with anything unsafe in a file name replaced. */
export function reproFileName(first: FirstDisagreement): string {
  return `repro-${first.node}-${first.executor}.json`.replace(/[^\w.-]+/g, "_");
}

/** The two sides must be different executors: the diff tells them apart by name, and one compared with itself says nothing. */
export function checkPair(reference: string, other: string): void {
  if (reference === other)
    throw new DiffSetupError(
      `pick two different executors: both sides are ${reference}, and the diff compares one executor with another`,
    );
}

/**
 * What decides the graph and the numbers a run used (not the executor picked, the tapped node or the ablation, which
 * the diff does not see): a diff's colours belong on the graph view only while this stays the same.
 */
export function graphKey(p: PlaygroundConfig, caseName: string | undefined): string {
  const { attention, position, fusedQkv, batch, length, kvLength, seed } = p;
  return JSON.stringify({ attention, position, fusedQkv, batch, length, kvLength, seed, case: caseName ?? null });
}
