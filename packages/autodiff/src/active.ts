// Which values grad() differentiates: those on a path from some `wrt` to the loss (float32 only: an int32 value, such
// as token ids, has no gradient). Backward nodes are added for these and nothing else.
import type { OpGraph } from "@attngraph/graph";

export function activeValues(graph: OpGraph, loss: string, wrt: readonly string[]): Set<string> {
  const fromWrt = new Set<string>(wrt);
  for (const n of graph.nodes) {
    if (n.dtype === "float32" && Object.values(n.inputs).some((v) => fromWrt.has(v))) fromWrt.add(n.name);
  }
  const toLoss = new Set<string>([loss]);
  for (const n of [...graph.nodes].reverse()) {
    if (!toLoss.has(n.name)) continue;
    for (const v of Object.values(n.inputs)) toLoss.add(v);
  }
  return new Set([...fromWrt].filter((v) => toLoss.has(v) && graph.dtypeOf(v) === "float32"));
}
