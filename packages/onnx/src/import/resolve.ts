// Names a user gives for a node of an imported graph → attngraph node names: the node's own name, an ONNX node or
// value name, an alias ("/h.0/attn/weights"), a last path segment matching any of those ("weights": every attention's
// weights), or a glob with * ("/h.0/*").
import type { OpGraph } from "@attngraph/graph";

export function resolveNames(graph: OpGraph, aliases: ReadonlyMap<string, string>, name: string): string[] {
  const nodes = graph.nodes.map((n) => n.name);
  const isNode = new Set(nodes);
  if (isNode.has(name)) return [name];
  const alias = aliases.get(name);
  if (alias) return [alias];
  const keys = [...nodes, ...aliases.keys()];
  const target = (k: string) => (isNode.has(k) ? k : aliases.get(k)!);
  let match: (k: string) => boolean;
  if (name.includes("*")) {
    const re = new RegExp(
      `^${name
        .split("*")
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
    );
    match = (k) => re.test(k);
  } else match = (k) => lastSegment(k) === name;
  return [...new Set(keys.filter(match).map(target))];
}

function lastSegment(name: string): string {
  const i = Math.max(name.lastIndexOf("/"), name.lastIndexOf("."));
  return i >= 0 ? name.slice(i + 1) : name;
}
