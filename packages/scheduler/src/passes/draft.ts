import type { GraphNode, OpGraph } from "@attngraph/graph";

/** A step before placement and layout: what the passes before placement rewrite. */
export interface DraftStep {
  readonly node: string;
  readonly kind: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly inputs: readonly (string | undefined)[];
  readonly shape: GraphNode["shape"];
  readonly fused?: readonly string[];
}

/** One draft step per graph node, in topological order, inputs in each op's declared order. */
export function draftSteps(graph: OpGraph): DraftStep[] {
  return graph.nodes.map((node) => {
    const def = graph.registry.get(node.kind, node.name);
    // Own keys only: an unfilled optional slot named "valueOf" is absent, not Object.prototype.valueOf.
    const inputs = def.inputs.map((i) => (Object.hasOwn(node.inputs, i.name) ? node.inputs[i.name] : undefined));
    return { node: node.name, kind: node.kind, attrs: node.attrs, inputs, shape: node.shape };
  });
}

/** How many steps read each value. */
export function consumerCounts(steps: readonly DraftStep[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const s of steps) for (const v of s.inputs) if (v !== undefined) n.set(v, (n.get(v) ?? 0) + 1);
  return n;
}

/** Why a watched value must stay a step of its own: an override writes it ("patched") or a tap reads it ("tapped"). */
export function watchedAs(patched: ReadonlySet<string> | undefined, node: string): string {
  return patched?.has(node) ? "patched" : "tapped";
}
