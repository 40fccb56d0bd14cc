// Runs one golden case through the same path a user takes: build the attention graph from the case's config, compile
// it for the given executors, tap the standard nodes, run, and compare every expected tensor with the case's tolerance.
import { grad } from "@attngraph/autodiff";
import type { Executor, OpGraph } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, compare, type AnyTensor, type Mismatch, type Tensor } from "@attngraph/tensor";
import { attentionGraphCase, flexGraphCase, type FlexCase, type GoldenCase, type GraphCase } from "@attngraph/testkit";

// The case → graph mapping lives in @attngraph/testkit (one copy for this runner and @attngraph/onnx's tests).
export { attentionGraphCase, gradientsNotChecked, type GraphCase } from "@attngraph/testkit";

export interface TensorCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly failures: number;
  readonly size: number;
  readonly worst: Mismatch | undefined;
  /** Set when the tensor could not be compared at all (wrong shape, no such node). */
  readonly problem?: string;
}

export interface CaseResult {
  readonly file: string;
  readonly name: string;
  readonly ok: boolean;
  readonly checks: readonly TensorCheck[];
  /** Why the case failed without a comparison (unsupported feature, a build or run error, nothing to compare). */
  readonly error?: string;
  /** Expected tensors that `--tap none` cannot compare (only the outputs come back), listed on the case's line. */
  readonly notCompared?: readonly string[];
  /** Parts of the case the runner cannot check at all yet (gradients, training steps), listed on the case's line. */
  readonly notChecked?: readonly string[];
  /** What a reader should know about a pass (a greedy token that differed at a tie of the top two logits). */
  readonly notes?: readonly string[];
}

export interface RunCaseOptions {
  /** Executors in preference order (fresh per case or shared: runs never share state). */
  readonly executors: readonly Executor[];
  /** Build with one fused QKV projection instead of three. */
  readonly fusedQkv?: boolean;
  /**
   * What to tap. "expected" (default): the nodes the case has expected tensors for. "all": every node (same numbers
   * expected). "none": nothing, so the scheduler may fuse the middle away; only the outputs are compared.
   */
  readonly tap?: "expected" | "all" | "none";
}

/** A golden-flex case: its variant's attention core (flexGraphCase), the forward tensors and every gradient it expects. */
export async function runFlexCase(c: FlexCase, options: RunCaseOptions): Promise<CaseResult> {
  try {
    return await runGraphCase(flexGraphCase(c), options);
  } catch (e) {
    return {
      file: c.file,
      name: c.name,
      ok: false,
      checks: [],
      error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e),
    };
  }
}

export async function runCase(c: GoldenCase, options: RunCaseOptions): Promise<CaseResult> {
  try {
    return await runGraphCase(attentionGraphCase(c, options.fusedQkv ?? false), options);
  } catch (e) {
    return {
      file: c.file,
      name: c.name,
      ok: false,
      checks: [],
      error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e),
    };
  }
}

/**
 * Compiles the graph on the executors, taps what the mode asks, runs once and compares every expected tensor it can.
 * A case passes only if at least one tensor was compared and every compared one is within tolerance.
 */
export async function runGraphCase(gc: GraphCase, options: RunCaseOptions): Promise<CaseResult> {
  const base = { file: gc.file, name: gc.name, ...(gc.notChecked?.length ? { notChecked: gc.notChecked } : {}) };
  try {
    const { graph, expected, inputs } = withGradients(gc);
    const mode = options.tap ?? "expected";
    const outputNames = new Set(graph.outputs);
    const missing = expected.filter((e) => !graph.has(e.node)).map((e) => e.name);
    if (missing.length)
      return {
        ...base,
        ok: false,
        checks: [],
        error: `expected tensor(s) with no node in the graph: ${missing.join(", ")}`,
      };
    // Untapped, only the graph's outputs come back; the rest is reported, never dropped silently.
    const compared = expected.filter((e) => mode !== "none" || outputNames.has(e.node));
    const notCompared = expected.filter((e) => !compared.includes(e)).map((e) => e.name);
    const skipped = notCompared.length ? { notCompared } : {};
    // A case that compares nothing proves nothing: `expected: {}`, or only tensors this mode cannot see.
    if (compared.length === 0) {
      const error =
        expected.length === 0
          ? "nothing to compare: expected holds no tensors"
          : `nothing to compare: ${notComparedText(notCompared)}`;
      return { ...base, ok: false, checks: [], error, ...skipped };
    }
    // Compiled only now: the early returns above hold no session that would need disposing.
    const session = await compile(graph, { executors: options.executors, weights: gc.weights() });
    const wanted = new Set(compared.map((e) => e.node));
    const got = new Map<string, Tensor>();
    const sub =
      mode === "none"
        ? undefined
        : session.tap(mode === "all" ? () => true : (n) => wanted.has(n)).subscribe((e) => got.set(e.node, e.tensor));
    try {
      const outputs = await session.run(inputs);
      if (mode === "none") for (const [n, t] of Object.entries(outputs)) got.set(n, t);
    } finally {
      sub?.unsubscribe();
      await session.dispose();
    }
    const checks = compared.map(({ name, node, tensor: exp }): TensorCheck => {
      const t = got.get(node);
      if (!t)
        return {
          name,
          ok: false,
          failures: exp.size,
          size: exp.size,
          worst: undefined,
          problem: "no tensor was delivered",
        };
      const r = compare(t, exp, gc.tolerance);
      return {
        name,
        ok: r.ok,
        failures: r.failures,
        size: exp.size,
        worst: r.worst,
        ...(r.shapeMismatch ? { problem: r.shapeMismatch } : {}),
      };
    });
    return { ...base, ok: checks.length > 0 && checks.every((k) => k.ok), checks, ...skipped };
  } catch (e) {
    return {
      ...base,
      ok: false,
      checks: [],
      error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e),
    };
  }
}

/**
 * The graph, expected tensors and inputs of a run: as given, or, with gradients to check, the gradient graph (whose
 * `<wrt>.grad` outputs are compared like any tensor) fed the upstream gradient.
 */
export function withGradients(gc: GraphCase): {
  graph: OpGraph;
  expected: GraphCase["expected"];
  inputs: Readonly<Record<string, AnyTensor>>;
} {
  if (!gc.gradients) return gc;
  const { loss, seed, expected } = gc.gradients;
  const g = grad(gc.graph, { loss, wrt: expected.map((e) => e.wrt) });
  const inputs = g.seed && seed ? { ...gc.inputs, [g.seed]: seed } : gc.inputs;
  return {
    graph: g.graph,
    inputs,
    expected: [...gc.expected, ...expected.map((e) => ({ name: e.name, node: g.grads[e.wrt]!, tensor: e.tensor }))],
  };
}

/** The note on a case's line: `not compared under --tap none: weights, scores`. */
export function notComparedText(names: readonly string[]): string {
  return `not compared under --tap none: ${names.join(", ")}`;
}

/** The note on a case's line for what the runner does not check: `not checked: …`. */
export function notCheckedText(names: readonly string[]): string {
  return `not checked: ${names.join(", ")}`;
}
