// The session runs behind one page run: observed (taps and timings collected), and with heads of `weights` ablated,
// twice: once with the heads zeroed (a run override through @attngraph/tools' `ablated`) and once without, so the page
// can say how much the output changed against the very same config and inputs, never against a stale earlier run.
import type { RunOptions, Session } from "@attngraph/runtime";
import type { AnyTensor, Shape, Tensor } from "@attngraph/tensor";
import { ablated } from "@attngraph/tools";
import { maxAbsDelta } from "./ablation-state.js";

/** The node whose heads the page ablates: the attention pattern, [B, H, L, S]. */
export const ABLATED_NODE = "weights";
/** Its heads axis: weights are [B, H, L, S]. */
const ABLATED_AXIS = 1;

export interface NodeTiming {
  readonly node: string;
  readonly kind: string;
  readonly executor: string;
  readonly shape: Shape;
  readonly ms: number;
}

/** What one observed run of a session gave. */
export interface ObservedRun {
  readonly runId: number;
  readonly outputs: Record<string, Tensor>;
  /** The watched nodes' tensors, as readers saw them (after any override). */
  readonly tapped: Map<string, Tensor>;
  readonly timings: NodeTiming[];
  readonly totalMs: number;
}

export interface AblatedRun extends ObservedRun {
  /** With heads ablated: max |Δ| over the graph's outputs against the run without the ablation; else undefined. */
  readonly outputDelta: number | undefined;
}

/** One run of `session` with `watched` tapped: its outputs, the tapped tensors and the per-node timings. */
export async function observedRun(
  session: Session,
  inputs: Readonly<Record<string, AnyTensor>>,
  watched: readonly string[],
  options: RunOptions,
): Promise<ObservedRun> {
  const tapped = new Map<string, Tensor>();
  const timings: NodeTiming[] = [];
  let totalMs = 0;
  let runId = 0;
  const subs = [
    session.tap([...watched]).subscribe((e) => tapped.set(e.node, e.tensor)),
    session.events$.subscribe((e) => {
      if (e.type === "run-start") runId = e.runId;
      else if (e.type === "node-end")
        timings.push({ node: e.node, kind: e.kind, executor: e.executor, shape: e.shape, ms: e.ms });
      else if (e.type === "run-end") totalMs = e.ms;
    }),
  ];
  try {
    const outputs = await session.run(inputs, options);
    return { runId, outputs, tapped, timings, totalMs };
  } finally {
    for (const s of subs) s.unsubscribe();
  }
}

/**
 * The run the page shows: plain without `heads`; with them, the run with those heads of ABLATED_NODE zeroed, and its
 * output delta against the same session's run without them.
 */
export async function ablatedRun(
  session: Session,
  inputs: Readonly<Record<string, AnyTensor>>,
  watched: readonly string[],
  heads: readonly number[],
  signal: AbortSignal,
): Promise<AblatedRun> {
  if (heads.length === 0)
    return { ...(await observedRun(session, inputs, watched, { signal })), outputDelta: undefined };
  // The reference run patches the node too, with the identity: a patched node is lowered as a step of its own, so both
  // runs share one plan and the delta is the ablation's alone, not a fused kernel's rounding against an unfused one.
  const clean = await observedRun(session, inputs, watched, { signal, override: { [ABLATED_NODE]: (v) => v } });
  signal.throwIfAborted();
  const list = [...heads];
  const run = await observedRun(session, inputs, watched, {
    signal,
    override: { [ABLATED_NODE]: (v) => ablated(ABLATED_NODE, v, list, "zero", ABLATED_AXIS) },
  });
  const outputDelta = Math.max(
    ...session.graph.outputs.map((o) =>
      maxAbsDelta(run.outputs[o]!.toFloat32Array(), clean.outputs[o]!.toFloat32Array()),
    ),
  );
  return { ...run, outputDelta };
}
