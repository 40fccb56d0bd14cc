// Runs one golden case through the same path a user takes: build the attention graph from the case's config, compile
// it for the given executors, tap the standard nodes, run, and compare every expected tensor with the case's tolerance.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { grad } from "@attngraph/autodiff";
import type { Executor, OpGraph } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, compare, type AnyTensor, type Mismatch, type Tensor, type Tolerance } from "@attngraph/tensor";
import type { GoldenCase } from "@attngraph/testkit";

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

/** Maps an expected tensor's name to the node that produces it: `output` is the graph's output (context without out_proj). */
function nodeFor(name: string, outputs: readonly string[]): string {
  return name === "output" ? outputs[0]! : name;
}

export async function runCase(c: GoldenCase, options: RunCaseOptions): Promise<CaseResult> {
  try {
    return await runGraphCase(attentionGraphCase(c, options.fusedQkv ?? false), options);
  } catch (e) {
    return { file: c.file, name: c.name, ok: false, checks: [], error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e) };
  }
}

/** An attention case as a graph case: the attention graph of its config, its weights and inputs, expected tensors and gradients. */
export function attentionGraphCase(c: GoldenCase, fusedQkv: boolean): GraphCase {
  const graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs, fusedQkv });
  const expected = Object.entries(c.expected).map(([name, tensor]) => ({ name, node: nodeFor(name, graph.outputs), tensor }));
  const { gradients, notChecked } = attentionGradients(c, graph, fusedQkv);
  return { file: c.file, name: c.name, graph, weights: () => attentionWeights(c.config, c.weights, { fusedQkv }), inputs: c.inputs, expected, tolerance: c.tolerance, notChecked, ...(gradients ? { gradients } : {}) };
}

/**
 * The gradients a golden-grad case expects, by the graph's value names: `x`, `kv` and the weights, which with
 * `fusedQkv` are the stacked W_qkv (W_kv with cross-attention) whose gradient is the stacked gradients. A gradient the
 * graph has no value for (a stacked weight with a part missing from the case) is named as not checked.
 */
function attentionGradients(c: GoldenCase, graph: OpGraph, fusedQkv: boolean): { gradients?: GraphCase["gradients"]; notChecked: string[] } {
  const names = Object.keys(c.expectedGrad);
  const seed = c.gradOutput;
  if (names.length === 0 || !seed) return { notChecked: gradientsNotChecked(names) };
  const byValue: Record<string, Tensor> = {};
  const notChecked: string[] = [];
  for (const n of ["x", "kv"]) if (c.expectedGrad[n] && graph.has(n)) byValue[n] = c.expectedGrad[n]!;
  const weightGrads = Object.fromEntries(Object.entries(c.expectedGrad).filter(([n]) => n !== "x" && n !== "kv"));
  try {
    // The stacked forms (W_qkv, W_kv, b_*) of the fused graph, or the same names as given.
    for (const [n, t] of Object.entries(attentionWeights(c.config, weightGrads, { fusedQkv }))) if (graph.has(n)) byValue[n] = t;
  } catch {
    // A stacked weight needs every part; without one, compare the gradients that map one to one.
    for (const [n, t] of Object.entries(weightGrads)) if (graph.has(n)) byValue[n] = t;
  }
  // Every expected gradient is compared, directly or as part of a stacked one, or named: never dropped silently.
  const stacked: Readonly<Record<string, readonly string[]>> = fusedQkv ? STACKED_PARTS : {};
  for (const n of Object.keys(c.expectedGrad)) {
    if (!byValue[n] && !(stacked[n] ?? []).some((p) => byValue[p])) notChecked.push(`expectedGrad.${n} (no value of this name in the graph)`);
  }
  const expected = Object.entries(byValue).map(([wrt, tensor]) => ({ name: `grad ${wrt}`, wrt, tensor }));
  return { gradients: { loss: graph.outputs[0]!, seed, expected }, notChecked };
}

/** With a fused QKV projection, the stacked weight each separate weight's gradient is compared as part of. */
const STACKED_PARTS: Readonly<Record<string, readonly string[]>> = {
  W_query: ["W_qkv"], W_key: ["W_qkv", "W_kv"], W_value: ["W_qkv", "W_kv"], b_query: ["b_qkv"], b_key: ["b_qkv", "b_kv"], b_value: ["b_qkv", "b_kv"],
};

/** What every kind of case comes down to: a graph, its weights and inputs, and tensors expected of named nodes. */
export interface GraphCase {
  readonly file: string;
  readonly name: string;
  readonly graph: OpGraph;
  /** Called only once something will be compared (a case that compares nothing compiles nothing). */
  readonly weights: () => Readonly<Record<string, AnyTensor>>;
  readonly inputs: Readonly<Record<string, AnyTensor>>;
  /** Each expected tensor with the node that produces it. */
  readonly expected: readonly { readonly name: string; readonly node: string; readonly tensor: Tensor }[];
  readonly tolerance: Tolerance;
  /** Parts of the case this runner cannot check at all (training steps), named on the case's line. */
  readonly notChecked?: readonly string[];
  /**
   * Gradients to check: the graph is differentiated (`grad()`) at `loss` with respect to each `wrt`, on the same run as
   * the forward tensors. `seed` is the upstream gradient (`<loss>.grad`) of a non-scalar loss; a scalar loss has none.
   */
  readonly gradients?: {
    readonly loss: string;
    readonly seed?: Tensor;
    readonly expected: readonly { readonly name: string; readonly wrt: string; readonly tensor: Tensor }[];
  };
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
    if (missing.length) return { ...base, ok: false, checks: [], error: `expected tensor(s) with no node in the graph: ${missing.join(", ")}` };
    // Untapped, only the graph's outputs come back; the rest is reported, never dropped silently.
    const compared = expected.filter((e) => mode !== "none" || outputNames.has(e.node));
    const notCompared = expected.filter((e) => !compared.includes(e)).map((e) => e.name);
    const skipped = notCompared.length ? { notCompared } : {};
    // A case that compares nothing proves nothing: `expected: {}`, or only tensors this mode cannot see.
    if (compared.length === 0) {
      const error = expected.length === 0 ? "nothing to compare: expected holds no tensors" : `nothing to compare: ${notComparedText(notCompared)}`;
      return { ...base, ok: false, checks: [], error, ...skipped };
    }
    // Compiled only now: the early returns above hold no session that would need disposing.
    const session = await compile(graph, { executors: options.executors, weights: gc.weights() });
    const wanted = new Set(compared.map((e) => e.node));
    const got = new Map<string, Tensor>();
    const sub = mode === "none" ? undefined : session.tap(mode === "all" ? () => true : (n) => wanted.has(n)).subscribe((e) => got.set(e.node, e.tensor));
    try {
      const outputs = await session.run(inputs);
      if (mode === "none") for (const [n, t] of Object.entries(outputs)) got.set(n, t);
    } finally {
      sub?.unsubscribe();
      await session.dispose();
    }
    const checks = compared.map(({ name, node, tensor: exp }): TensorCheck => {
      const t = got.get(node);
      if (!t) return { name, ok: false, failures: exp.size, size: exp.size, worst: undefined, problem: "no tensor was delivered" };
      const r = compare(t, exp, gc.tolerance);
      return { name, ok: r.ok, failures: r.failures, size: exp.size, worst: r.worst, ...(r.shapeMismatch ? { problem: r.shapeMismatch } : {}) };
    });
    return { ...base, ok: checks.length > 0 && checks.every((k) => k.ok), checks, ...skipped };
  } catch (e) {
    return { ...base, ok: false, checks: [], error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The graph, expected tensors and inputs of a run: as given, or, with gradients to check, the gradient graph (whose
 * `<wrt>.grad` outputs are compared like any tensor) fed the upstream gradient.
 */
export function withGradients(gc: GraphCase): { graph: OpGraph; expected: GraphCase["expected"]; inputs: Readonly<Record<string, AnyTensor>> } {
  if (!gc.gradients) return gc;
  const { loss, seed, expected } = gc.gradients;
  const g = grad(gc.graph, { loss, wrt: expected.map((e) => e.wrt) });
  const inputs = g.seed && seed ? { ...gc.inputs, [g.seed]: seed } : gc.inputs;
  return { graph: g.graph, inputs, expected: [...gc.expected, ...expected.map((e) => ({ name: e.name, node: g.grads[e.wrt]!, tensor: e.tensor }))] };
}

/** The note on a case's line: `not compared under --tap none: weights, scores`. */
export function notComparedText(names: readonly string[]): string {
  return `not compared under --tap none: ${names.join(", ")}`;
}

/**
 * A case's expected gradients as one not-checked entry (a block case has one per parameter, which would fill the line):
 * `expectedGrad (11 gradients: x, ln1.weight, ln1.bias, …)`; none for a forward-only case.
 */
export function gradientsNotChecked(names: readonly string[]): string[] {
  if (names.length === 0) return [];
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")}, …` : names.join(", ");
  return [`expectedGrad (${names.length} gradient${names.length === 1 ? "" : "s"}: ${shown})`];
}

/** The note on a case's line for what the runner does not check: `not checked: …`. */
export function notCheckedText(names: readonly string[]): string {
  return `not checked: ${names.join(", ")}`;
}
