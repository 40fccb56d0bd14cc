// Where a node's value keeps its attention heads, read from the graph rather than guessed from the value's rank or
// size: [B, T, E] with T = 3 looks like [B, H, ...] with H = 3, and `q.split` [B, T, H, D] has heads on axis 2.
// Ops declare the axes of the per-head values they read and make (OpInput.heads, OpDef.outputHeads: score,
// weighted-sum, attention, kv-append, rope, alibi); from there the axis follows transposes (their permutation) and ops
// whose output has exactly the shape of their first input (mask, softmax, dropout and the like), up and down the graph.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";

/** The axis of `node`'s value that indexes attention heads, or undefined when the graph gives it none. */
export function headsAxis(graph: OpGraph, node: string): number | undefined {
  return find(graph, node, new Set());
}

/** headsAxis, or a typed error naming the node and saying which values have heads. */
export function requireHeadsAxis(graph: OpGraph, node: string, subject: string): number {
  if (!graph.has(node) || graph.roleOf(node) !== "node")
    throw new GraphValidationError(subject, "no node of this name", "a node of the graph", node);
  const axis = headsAxis(graph, node);
  if (axis === undefined) {
    throw new GraphValidationError(
      subject,
      "the value has no heads axis",
      "a per-head value (scores, weights, q.heads, k.heads, v.heads, context.heads, q.split, …: one an attention op reads or makes per head)",
      `${node} [${graph.shapeOf(node).join(", ")}]`,
    );
  }
  return axis;
}

function find(graph: OpGraph, name: string, seen: Set<string>): number | undefined {
  if (seen.has(name)) return undefined;
  seen.add(name);
  const role = graph.roleOf(name);
  if (role === "node") {
    const n = graph.node(name);
    const def = graph.registry.get(n.kind, n.name);
    if (def.outputHeads !== undefined) return def.outputHeads;
    const source = def.inputs[0] ? n.inputs[def.inputs[0].name] : undefined;
    if (source !== undefined) {
      if (n.kind === "transpose") {
        const a = find(graph, source, seen);
        const perm = permOf(n.attrs);
        if (a !== undefined && perm) return perm.indexOf(a);
      } else if (sameShape(graph.shapeOf(source), graph.shapeOf(name))) {
        const a = find(graph, source, seen);
        if (a !== undefined) return a;
      }
    }
  }
  // Downstream: a reader that declares heads on the slot this value fills, or passes the axis on.
  for (const { node: reader, slot } of graph.consumers(name)) {
    const r = graph.node(reader);
    const def = graph.registry.get(r.kind, r.name);
    const input = def.inputs.find((i) => i.name === slot);
    if (input?.heads !== undefined) return input.heads;
    if (slot !== def.inputs[0]?.name) continue;
    if (r.kind === "transpose") {
      const a = find(graph, reader, seen);
      const perm = permOf(r.attrs);
      if (a !== undefined && perm) return perm[a];
    } else if (sameShape(graph.shapeOf(name), graph.shapeOf(reader))) {
      const a = find(graph, reader, seen);
      if (a !== undefined) return a;
    }
  }
  return undefined;
}

function permOf(attrs: Readonly<Record<string, unknown>>): readonly number[] | undefined {
  const perm = attrs["perm"];
  return Array.isArray(perm) && perm.every((p) => typeof p === "number") ? (perm as number[]) : undefined;
}

function sameShape(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
