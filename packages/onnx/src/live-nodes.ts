// Which nodes an export lowers: those some exported output depends on.
import type { OpGraph } from "@attngraph/graph";

/** Nodes some output depends on; nothing else is lowered (a dead node with no ONNX form does not fail the export). */
export function liveNodes(graph: OpGraph, outputs: readonly string[]): Set<string> {
  const live = new Set<string>();
  const stack = [...outputs];
  while (stack.length) {
    const name = stack.pop()!;
    if (live.has(name) || graph.roleOf(name) !== "node") continue;
    live.add(name);
    stack.push(...Object.values(graph.node(name).inputs));
  }
  return live;
}
