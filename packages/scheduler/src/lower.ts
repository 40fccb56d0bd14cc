import { GraphValidationError, type Executor, type OpGraph } from "@attngraph/graph";
import { AttnGraphError } from "@attngraph/tensor";
import { eliminateDeadNodes } from "./passes/dead-nodes.js";
import { draftSteps } from "./passes/draft.js";
import { fuseAttention } from "./passes/fusion.js";
import { fuseAttentionBackward } from "./passes/fusion-backward.js";
import { fuseBlockOps } from "./passes/fusion-block.js";
import { placeNode } from "./passes/placement.js";
import { planViews } from "./passes/views.js";
import type { PassReport, Plan, PlanStep } from "./plan.js";
import { lowerPointwise } from "./passes/pointwise.js";

export interface LowerOptions {
  /** Executors in order of preference. Each node goes to the first that supports it, unless placed explicitly. */
  readonly executors: readonly Executor[];
  /** Node name → executor name, for nodes that must run on a given executor. */
  readonly placement?: Readonly<Record<string, string>>;
  /** Nodes that taps watch: kept, materialised and never fused away. */
  readonly watched?: Iterable<string>;
  /**
   * Nodes an override writes (activation patching, see Session.patch): like watched nodes, each is produced by a step
   * of its own and never fused away (explain() says "patched"), and no fused step reads around the override.
   */
  readonly patched?: Iterable<string>;
  /** Turn fusion off (every node runs as its own step), e.g. to compare fused and unfused numbers. */
  readonly fusion?: boolean;
  /**
   * Nodes whose values outlive the run on their executor (a training step's new parameters, which the session keeps as
   * weights): computed even when no output reads them, never fused away, and never laid into a pooled arena.
   */
  readonly keep?: Iterable<string>;
}

/**
 * Lowers a graph to a plan. The passes run in this order, each a module of its own that reports what it changed:
 * dead-node elimination, fusion, pointwise lowering, placement, view elision. Everything that can be wrong about
 * executors is reported here, before any run.
 */
export function lower(graph: OpGraph, options: LowerOptions): Plan {
  const executors = checkExecutors(options.executors);
  // A Map of own keys: a node named "valueOf" must not find Object.prototype.valueOf as its placement.
  const overrides = new Map(Object.entries(options.placement ?? {}));
  for (const name of overrides.keys()) {
    if (!graph.has(name) || graph.roleOf(name) !== "node")
      throw new GraphValidationError(`placement.${name}`, "placement names no node of the graph", "a node name", name);
  }
  const watched = new Set(options.watched ?? []);
  for (const name of watched)
    if (!graph.has(name) || graph.roleOf(name) !== "node")
      throw new GraphValidationError(`tap ${name}`, "no node of this name");
  const patched = new Set(options.patched ?? []);
  for (const name of patched) {
    if (!graph.has(name) || graph.roleOf(name) !== "node")
      throw new GraphValidationError(`override ${name}`, "no node of this name", "a node name", name);
    watched.add(name); // a patched value must exist as itself, exactly as a tapped one
  }
  const kept = new Set(options.keep ?? []);
  for (const name of kept)
    if (!graph.has(name) || graph.roleOf(name) !== "node")
      throw new GraphValidationError(`keep ${name}`, "no node of this name", "a node name", name);
  // To dead-node elimination and fusion a kept node is an output: live, and materialised by a step of its own.
  const liveOutputs = [...graph.outputs, ...kept];

  const passes: PassReport[] = [];
  const dead = eliminateDeadNodes(draftSteps(graph), liveOutputs, watched);
  passes.push(dead.report);
  let drafts = dead.steps;
  if (options.fusion !== false) {
    // The backward first: it fuses a training graph's chains forward and backward together, which the forward fusion
    // alone cannot (the backward reads the chain's middle).
    const backward = fuseAttentionBackward(drafts, {
      graph,
      outputs: liveOutputs,
      watched,
      patched,
      executors,
      overrides,
    });
    if (backward.report) passes.push(backward.report);
    drafts = backward.steps;
    const fused = fuseAttention(drafts, {
      outputs: liveOutputs,
      watched,
      patched,
      executors,
      overrides,
      shapeOf: (v) => (graph.has(v) ? graph.shapeOf(v) : undefined),
    });
    passes.push(fused.report);
    drafts = fused.steps;
    // Only where the graph has the block ops: an attention-only plan's explain() stays as it was.
    if (drafts.some((d) => d.kind === "gelu" || d.kind === "layer-norm")) {
      const block = fuseBlockOps(drafts, { graph, outputs: liveOutputs, watched, patched, executors, overrides });
      passes.push(block.report);
      drafts = block.steps;
    }
  } else {
    passes.push({ pass: "fusion", summary: "off (fusion: false)" });
  }

  const pointwise = lowerPointwise(drafts, graph);
  if (pointwise.report.summary !== "none") passes.push(pointwise.report);
  drafts = pointwise.steps;

  const executorOf = new Map<string, string>();
  const placements = drafts.map((d) => {
    const first = d.inputs[0];
    const isView = d.fused === undefined && graph.registry.get(d.kind, d.node).view === true;
    const p = placeNode(
      d,
      executors,
      overrides.get(d.node),
      first === undefined ? undefined : executorOf.get(first),
      isView,
    );
    executorOf.set(d.node, p.executor);
    return p;
  });
  const moved = drafts.filter((_, i) => placements[i]!.how === "fallback" || placements[i]!.how === "override").length;
  passes.push({
    pass: "placement",
    summary: `${[...new Set(placements.map((p) => p.executor))].join(", ")}${moved ? `; ${moved} node(s) placed by fallback or by the user (below)` : ""}`,
  });
  const views = planViews(drafts, graph);
  passes.push(views.report);

  const steps: PlanStep[] = drafts.map((d, i) => {
    const l = views.layouts.get(d.node)!;
    return { ...d, placement: placements[i]!, layout: l.layout, layoutNote: l.note };
  });
  const lastUse = new Map<string, number>();
  steps.forEach((s, i) => s.inputs.forEach((v) => v !== undefined && lastUse.set(v, i)));
  for (const out of liveOutputs) lastUse.set(out, steps.length);
  const byName = new Map(executors.map((e) => [e.name, e] as const));
  return {
    graph,
    steps,
    executors: byName,
    inputs: graph.inputs,
    weights: graph.weights,
    outputs: graph.outputs,
    watched,
    patched,
    kept,
    lastUse,
    passes,
  };
}

function checkExecutors(executors: readonly Executor[]): readonly Executor[] {
  if (!Array.isArray(executors)) {
    throw new GraphValidationError(
      "executors",
      "no executor list",
      "an array of executors (e.g. [createCpuExecutor()])",
      executors === null ? "null" : typeof executors,
    );
  }
  if (executors.length === 0)
    throw new GraphValidationError("executors", "no executor given", "at least one executor", "none");
  const seen = new Set<string>();
  for (const [i, ex] of executors.entries()) {
    if (typeof ex !== "object" || ex === null || typeof ex.name !== "string" || typeof ex.supports !== "function") {
      throw new GraphValidationError(
        `executors[${i}]`,
        "not an executor",
        "an object with name, supports(), dispatch() (the executor contract)",
        ex === null ? "null" : typeof ex,
      );
    }
    if (ex.specVersion !== 1) {
      throw new AttnGraphError("executor", `executor ${ex.name}: unsupported contract version`, {
        subject: ex.name,
        expected: "1",
        got: String(ex.specVersion),
      });
    }
    if (seen.has(ex.name))
      throw new GraphValidationError("executors", "two executors share a name", "unique names", ex.name);
    seen.add(ex.name);
  }
  return executors;
}
