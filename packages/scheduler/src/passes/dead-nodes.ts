import type { PassReport } from "../plan.js";
import type { DraftStep } from "./draft.js";

/**
 * Drops steps whose value reaches neither a graph output nor a watched node: nobody would see what they compute.
 * Walks backwards from the live set, so a chain feeding only a dead node goes with it.
 */
export function eliminateDeadNodes(
  steps: readonly DraftStep[],
  outputs: readonly string[],
  watched: ReadonlySet<string>,
): { steps: DraftStep[]; report: PassReport } {
  const live = new Set<string>([...outputs, ...watched]);
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (live.has(s.node)) for (const v of s.inputs) if (v !== undefined) live.add(v);
  }
  const kept = steps.filter((s) => live.has(s.node));
  const removed = steps.filter((s) => !live.has(s.node)).map((s) => s.node);
  return {
    steps: kept,
    report: {
      pass: "dead nodes",
      summary: removed.length ? `removed ${removed.join(", ")} (consumed by no output or tap)` : "none removed",
    },
  };
}
