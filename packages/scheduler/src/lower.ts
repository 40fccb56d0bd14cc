import { GraphValidationError, type Executor, type OpGraph } from "@attngraph/graph";
import { AttnGraphError } from "@attngraph/tensor";
import { planLayout } from "./layout.js";
import { placeNode } from "./placement.js";
import type { Plan, PlanStep } from "./plan.js";

export interface LowerOptions {
  /** Executors in order of preference. Each node goes to the first that supports it, unless placed explicitly. */
  readonly executors: readonly Executor[];
  /** Node name → executor name, for nodes that must run on a given executor. */
  readonly placement?: Readonly<Record<string, string>>;
}

/**
 * Lowers a graph to a plan: topological order (the graph's own), each node's inputs in its op's declared order, a
 * placement per node, and views planned where the layout allows. Everything that can be wrong about executors is
 * reported here, before any run.
 */
export function lower(graph: OpGraph, options: LowerOptions): Plan {
  const { executors } = options;
  if (executors.length === 0) throw new GraphValidationError("executors", "no executor given", "at least one executor", "none");
  const byName = new Map<string, Executor>();
  for (const ex of executors) {
    if (ex.specVersion !== 1) {
      throw new AttnGraphError("executor", `executor ${ex.name}: unsupported contract version`, { subject: ex.name, expected: "1", got: String(ex.specVersion) });
    }
    if (byName.has(ex.name)) throw new GraphValidationError("executors", "two executors share a name", "unique names", ex.name);
    byName.set(ex.name, ex);
  }
  const overrides = options.placement ?? {};
  for (const name of Object.keys(overrides)) {
    if (!graph.has(name) || graph.roleOf(name) !== "node") throw new GraphValidationError(`placement.${name}`, "placement names no node of the graph", "a node name", name);
  }

  const executorOf = new Map<string, string>();
  const contiguous = new Map<string, boolean>();
  const steps: PlanStep[] = [];
  for (const node of graph.nodes) {
    const def = graph.registry.get(node.kind, node.name);
    const inputs = def.inputs.map((i) => node.inputs[i.name]);
    const first = inputs[0];
    const placement = placeNode(node, executors, overrides[node.name], first === undefined ? undefined : executorOf.get(first), def.view === true);
    const layout = planLayout(node, graph, contiguous);
    executorOf.set(node.name, placement.executor);
    contiguous.set(node.name, layout.contiguous);
    steps.push({ node: node.name, kind: node.kind, attrs: node.attrs, inputs, shape: node.shape, placement, layout: layout.layout, layoutNote: layout.note });
  }

  const lastUse = new Map<string, number>();
  steps.forEach((s, i) => s.inputs.forEach((v) => v !== undefined && lastUse.set(v, i)));
  for (const out of graph.outputs) lastUse.set(out, steps.length);
  return { graph, steps, executors: byName, inputs: graph.inputs, weights: graph.weights, outputs: graph.outputs, lastUse };
}
