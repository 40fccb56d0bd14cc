// One run of the page: config → graph → compile → tap → run, with everything the views draw. The run controller
// calls this with an AbortSignal; the session checks it between steps, so a newer config stops this run promptly.
// With heads ablated, the session runs twice (src/ablated-run.ts): the view shows the ablated run.
import { buildAttention, normalizeConfig, type AttentionConfig } from "@attngraph/attention";
import type { OpGraph } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { lower, type Plan } from "@attngraph/scheduler";
import { compare, formatShape, type Tensor } from "@attngraph/tensor";
import type { GoldenCase } from "@attngraph/testkit/case";
import { ABLATED_NODE, ablatedRun, type NodeTiming } from "./ablated-run.js";
import { headList } from "./ablation-state.js";
import { executorsFor } from "./executors.js";
import { runInputs } from "./inputs.js";
import { builderOptions, checkSizes, type PlaygroundConfig } from "./playground-config.js";

export type { NodeTiming } from "./ablated-run.js";

export interface RunOutcome {
  readonly runId: number;
  readonly executor: string;
  readonly config: AttentionConfig;
  readonly graph: OpGraph;
  /** The plan this run executed (lowered for its watched nodes): each step's executor, fused chains. */
  readonly plan: Plan;
  readonly explain: string;
  /** The watched nodes' tensors: `weights`, `masked` when the graph masks, and the selected node. */
  readonly tapped: ReadonlyMap<string, Tensor>;
  readonly timings: readonly NodeTiming[];
  readonly totalMs: number;
  readonly source: string;
  /** The comparison of `weights` with the loaded case, when the case's numbers apply to this config. */
  readonly golden: string | undefined;
  /** The graph's inputs and weights this run used (the diff view runs the same graph on the same numbers). */
  readonly inputs: Readonly<Record<string, Tensor>>;
  readonly weights: Readonly<Record<string, Tensor>>;
  /** The graph's first output as this run computed it (with the ablation, if any). */
  readonly output: { readonly node: string; readonly tensor: Tensor };
  /** Heads of `weights` zeroed in this run; the taps, timings and output above are the ablated run's. */
  readonly ablated: readonly number[];
  /** With heads ablated: max |Δ| over the graph's outputs against the same session's run without the ablation. */
  readonly outputDelta: number | undefined;
}

/** The nodes a run watches: what the heatmaps need, plus the node clicked in the graph. */
export function watchedNodes(graph: OpGraph, selected: string | undefined): string[] {
  const names = ["weights", "masked"].filter((n) => graph.has(n) && graph.roleOf(n) === "node");
  if (selected && graph.has(selected) && graph.roleOf(selected) === "node" && !names.includes(selected))
    names.push(selected);
  return names;
}

export async function runOnce(
  p: PlaygroundConfig,
  loaded: GoldenCase | undefined,
  ablatedHeads: readonly number[],
  signal: AbortSignal,
): Promise<RunOutcome> {
  checkSizes(p);
  const config = normalizeConfig(p.attention); // a bad value is a ConfigError naming the key
  const data = runInputs(config, p, loaded);
  const graph = buildAttention(config, builderOptions(p, "keyPaddingMask" in data.inputs));
  const executors = await executorsFor(p.executor);
  signal.throwIfAborted();
  const session = await compile(graph, { executors, weights: data.weights });
  try {
    signal.throwIfAborted();
    const watched = watchedNodes(graph, p.selected);
    const heads = [...ablatedHeads];
    const run = await ablatedRun(session, data.inputs, watched, heads, signal);
    const shapes = Object.fromEntries(Object.entries(data.inputs).map(([k, t]) => [k, t.shape]));
    const patched = heads.length ? [ABLATED_NODE] : [];
    const outputNode = graph.outputs[0]!;
    return {
      runId: run.runId,
      executor: p.executor,
      config,
      graph,
      plan: lower(graph, { executors, watched, patched }), // the same lowering the session did for these taps and patches
      explain: session.explain({ watched, patched, inputs: shapes }),
      tapped: run.tapped,
      timings: run.timings,
      totalMs: run.totalMs,
      source: data.source,
      golden:
        data.golden && heads.length
          ? `${headList(heads)} of ${ABLATED_NODE} zeroed: no golden comparison`
          : goldenCheck(data.golden, config, p, run.tapped.get("weights")),
      inputs: data.inputs,
      weights: data.weights,
      output: { node: outputNode, tensor: run.outputs[outputNode]! },
      ablated: heads,
      outputDelta: run.outputDelta,
    };
  } finally {
    await session.dispose();
  }
}

/** Compares `weights` with the case when the case's expected numbers are for this very config. */
function goldenCheck(
  g: GoldenCase | undefined,
  c: AttentionConfig,
  p: PlaygroundConfig,
  weights: Tensor | undefined,
): string | undefined {
  if (!g) return undefined;
  const expected = g.expected.weights;
  if (!expected || !weights) return `the case ${g.name} has no expected weights`;
  const differs: string[] = (["causal", "window", "scale"] as const).filter((k) => g.config[k] !== c[k]);
  if (p.position !== "none") differs.push("position");
  if (differs.length) return `config differs from the case in ${differs.join(", ")}: no golden comparison`;
  const r = compare(weights, expected, g.tolerance);
  if (r.shapeMismatch) return `weights ${formatShape(weights.shape)} cannot be compared: ${r.shapeMismatch}`;
  return r.ok
    ? `weights match the golden case ${g.name}: ${expected.size} of ${expected.size} within abs ${g.tolerance.abs}, rel ${g.tolerance.rel}`
    : `weights differ from the golden case ${g.name}: ${r.failures} of ${expected.size} outside the tolerance`;
}
