// Runs one golden case through the same path a user takes: build the attention graph from the case's config, compile
// it for the given executors, tap the standard nodes, run, and compare every expected tensor with the case's tolerance.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import type { Executor } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, compare, type Mismatch, type Tensor } from "@attngraph/tensor";
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
  const base = { file: c.file, name: c.name };
  try {
    const fusedQkv = options.fusedQkv ?? false;
    const graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs, fusedQkv });
    const mode = options.tap ?? "expected";
    const outputNames = new Set(graph.outputs);
    const allNames = Object.keys(c.expected);
    const missing = allNames.filter((n) => !graph.has(nodeFor(n, graph.outputs)));
    if (missing.length) return { ...base, ok: false, checks: [], error: `expected tensor(s) with no node in the graph: ${missing.join(", ")}` };
    // Untapped, only the graph's outputs come back; the rest is reported, never dropped silently.
    const expectedNames = allNames.filter((n) => mode !== "none" || outputNames.has(nodeFor(n, graph.outputs)));
    const notCompared = allNames.filter((n) => !expectedNames.includes(n));
    const skipped = notCompared.length ? { notCompared } : {};
    // A case that compares nothing proves nothing: `expected: {}`, or only tensors this mode cannot see.
    if (expectedNames.length === 0) {
      const error = allNames.length === 0 ? "nothing to compare: expected holds no tensors" : `nothing to compare: ${notComparedText(notCompared)}`;
      return { ...base, ok: false, checks: [], error, ...skipped };
    }
    // Compiled only now: the early returns above hold no session that would need disposing.
    const session = await compile(graph, { executors: options.executors, weights: attentionWeights(c.config, c.weights, { fusedQkv }) });
    const wanted = new Set(expectedNames.map((n) => nodeFor(n, graph.outputs)));
    const got = new Map<string, Tensor>();
    const sub = mode === "none" ? undefined : session.tap(mode === "all" ? () => true : (n) => wanted.has(n)).subscribe((e) => got.set(e.node, e.tensor));
    try {
      const outputs = await session.run(c.inputs);
      if (mode === "none") for (const [n, t] of Object.entries(outputs)) got.set(n, t);
    } finally {
      sub?.unsubscribe();
      await session.dispose();
    }
    const checks = expectedNames.map((n): TensorCheck => {
      const exp = c.expected[n]!;
      const t = got.get(nodeFor(n, graph.outputs));
      if (!t) return { name: n, ok: false, failures: exp.size, size: exp.size, worst: undefined, problem: "no tensor was delivered" };
      const r = compare(t, exp, c.tolerance);
      return { name: n, ok: r.ok, failures: r.failures, size: exp.size, worst: r.worst, ...(r.shapeMismatch ? { problem: r.shapeMismatch } : {}) };
    });
    return { ...base, ok: checks.length > 0 && checks.every((k) => k.ok), checks, ...skipped };
  } catch (e) {
    return { ...base, ok: false, checks: [], error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e) };
  }
}

/** The note on a case's line: `not compared under --tap none: weights, scores`. */
export function notComparedText(names: readonly string[]): string {
  return `not compared under --tap none: ${names.join(", ")}`;
}
