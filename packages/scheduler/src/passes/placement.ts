import { GraphValidationError, type Executor } from "@attngraph/graph";
import { UnsupportedError } from "@attngraph/tensor";
import type { Placement } from "../plan.js";
import type { DraftStep } from "./draft.js";

/**
 * Picks the executor of one node. A user override must be supported, else it is an error (never silently moved). Without
 * one, a view op stays on its input's executor when that one can run it (a view has to live where its data is);
 * otherwise the first executor in preference order that supports the op, recording why earlier ones were skipped.
 */
export function placeNode(
  node: Pick<DraftStep, "node" | "kind" | "attrs">,
  executors: readonly Executor[],
  override: string | undefined,
  inputExecutor: string | undefined,
  isView: boolean,
): Placement {
  if (override !== undefined) {
    const ex = executors.find((e) => e.name === override);
    if (!ex) {
      throw new GraphValidationError(
        `placement.${node.node}`,
        "no executor with this name",
        executors.map((e) => e.name).join(", "),
        override,
      );
    }
    const s = ex.supports(node.kind, node.attrs);
    if (!s.ok)
      throw new UnsupportedError(
        `op ${node.kind} on executor ${ex.name} (${s.reason}), placed there for node ${node.node}`,
        { subject: node.node },
      );
    return { executor: ex.name, how: "override", skipped: [] };
  }
  if (isView && inputExecutor !== undefined) {
    const ex = executors.find((e) => e.name === inputExecutor);
    if (ex?.supports(node.kind, node.attrs).ok) return { executor: ex.name, how: "follows-input", skipped: [] };
  }
  const skipped: string[] = [];
  for (const ex of executors) {
    const s = ex.supports(node.kind, node.attrs);
    if (s.ok) return { executor: ex.name, how: skipped.length ? "fallback" : "default", skipped };
    skipped.push(`${ex.name}: ${s.reason}`);
  }
  throw new UnsupportedError(
    `op ${node.kind} on executor ${executors.map((e) => e.name).join(", ")} (node ${node.node}: ${skipped.join("; ")})`,
    { subject: node.node },
  );
}
