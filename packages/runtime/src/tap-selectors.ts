// What a tap selects: a selector (a node name, a list of names or a predicate) checked against the graph's nodes and
// made a matcher, for Session.tap() and a run's own tap (RunOptions.tap). Checked when the tap is made, so an unknown
// name is an error there rather than a stream that never emits.
import { GraphValidationError } from "@attngraph/graph";
import { TapError } from "./errors.js";
import { withRunTap, type RunTap, type TapSelector, type Watcher } from "./taps.js";

/** `watched` with the run's own tap added (its selector checked like tap()'s). */
export function withCheckedRunTap(
  watched: Map<string, Watcher[]>,
  runTap: RunTap,
  nodeNames: readonly string[],
): Map<string, Watcher[]> {
  if (typeof runTap !== "object" || runTap === null || typeof runTap.next !== "function") {
    throw new GraphValidationError(
      "run options.tap",
      "invalid run tap",
      "{ nodes: a node name, a list of names or a predicate, next: (event) => void }",
      runTap === null ? "null" : typeof runTap,
    );
  }
  const matches = matcherOf(runTap.nodes, nodeNames);
  const label = "run options.tap";
  const guarded = (node: string): boolean => {
    try {
      return matches(node);
    } catch (e) {
      throw new TapError(label, node, e);
    }
  };
  return withRunTap(watched, nodeNames, label, guarded, runTap.next);
}

export function matcherOf(selector: TapSelector, nodeNames: readonly string[]): (node: string) => boolean {
  if (typeof selector === "function") return selector;
  const names = typeof selector === "string" ? [selector] : selector;
  if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) {
    throw new GraphValidationError(
      "tap",
      "invalid selector",
      "a node name, a list of node names or a predicate",
      typeof selector,
    );
  }
  for (const n of names) {
    if (!nodeNames.includes(n)) {
      throw new GraphValidationError(`tap ${n}`, "no node of this name", `one of ${nodeNames.join(", ")}`, n);
    }
  }
  const set = new Set(names);
  return (node) => set.has(node);
}
