// One case on one executor, untapped (the middle fuses into one attention step) and tapped (every named tensor kept
// and read back), compared with the float64 reference. Returns what disagreed, in words, or nothing.
import type { Executor } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { compare, formatShape, sameShape, type Tensor, type Tolerance } from "@attngraph/tensor";
import { referenceAttention, type ReferenceName } from "@attngraph/testkit";
import { describeCase, materialize, type AttentionCase, type Materialized } from "./cases.js";

export const NAMES: readonly ReferenceName[] = ["queries", "keys", "values", "scores", "weights", "context", "output"];

/** A plain float array with a shape: the reference's tensors, and host copies of an executor's. */
export interface Dense {
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
}

/**
 * The tolerance for one named tensor: |got − ref| <= abs + rel·|ref|, with abs = TOL·(1 + max|ref|).
 *
 * Why 1e-5: the executors compute in float32 (unit roundoff u = 2^-24 ≈ 6e-8) and the reference in float64. A dot
 * product of n terms rounds with error about √n·u·Σ|aᵢbᵢ| (at worst n·u·Σ|aᵢbᵢ|); here n <= 64, each tensor is at most
 * four products deep (projection → score → softmax·V → out-proj), and the softmax turns an absolute error δ in a scaled
 * score into a relative error δ in its weight. Relative to the tensor's own magnitude (1 + max|ref|) the worst-case
 * bound is about 64·u·3 ≈ 1.2e-5 and typical errors are a few u; the worst measured over 2000 cases is 2.1e-7 on cpu
 * and 7.5e-7 on wasm (docs/reliability.md), 13 to 50 times below this tolerance, while a real bug (a wrong mask entry,
 * kv-head mapping, bias or scale) moves values by 1e-2 or more, 1000 times above it.
 */
export const TOL = 1e-5;

export function toleranceFor(ref: Dense): Tolerance {
  let max = 0;
  for (let i = 0; i < ref.data.length; i++) {
    const v = Math.abs(ref.data[i]!);
    if (v > max && Number.isFinite(v)) max = v;
  }
  return { abs: TOL * (1 + max), rel: TOL };
}

/** What is wrong with `got` against `expected`, or undefined. NaN must meet NaN and ±∞ the same ∞ (`equalNan`). */
export function mismatch(
  label: string,
  got: Dense,
  expected: Dense,
  tol: Tolerance,
  equalNan = false,
): string | undefined {
  if (!sameShape(got.shape, expected.shape))
    return `${label}: shape ${formatShape(got.shape)}, expected ${formatShape(expected.shape)}`;
  const r = compare(got.data, expected.data, tol, { equalNan });
  if (r.ok) return undefined;
  const w = r.worst!;
  return `${label}: ${r.failures} of ${got.data.length} elements off; worst [${unravel(w.index, got.shape).join(", ")}] got ${w.got}, expected ${w.expected} (tolerance abs ${tol.abs.toExponential(2)} rel ${tol.rel})`;
}

function unravel(i: number, shape: readonly number[]): number[] {
  const out: number[] = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    out.unshift(i % shape[d]!);
    i = Math.floor(i / shape[d]!);
  }
  return out;
}

export interface Outcome {
  /** The graph output (`output`, or `context` without an output projection). */
  readonly output: Tensor;
  /** Tapped tensors by node name (tapped runs only). */
  readonly taps: ReadonlyMap<string, Tensor>;
  /** Whether the plan that ran had a fused attention step. */
  readonly fused: boolean;
}

/** Runs a materialized case once, untapped or with every standard name tapped; `fusion: false` turns fusion off. */
export async function runCase(m: Materialized, executor: Executor, tapped: boolean, fusion = true): Promise<Outcome> {
  const session = await compile(m.graph, { executors: [executor], weights: m.weights, fusion });
  try {
    const names = NAMES.filter((n) => m.graph.has(n));
    const taps = new Map<string, Tensor>();
    const sub = tapped ? session.tap(names).subscribe((e) => taps.set(e.node, e.tensor)) : undefined;
    const outputs = await session.run(m.inputs);
    sub?.unsubscribe();
    const plan = tapped ? undefined : session.plan;
    return {
      output: outputs[m.graph.outputs[0]!]!,
      taps,
      fused: plan ? plan.steps.some((s) => s.fused !== undefined) : false,
    };
  } finally {
    await session.dispose();
  }
}

/** Every disagreement of one executor with the reference on one case, untapped and tapped. */
export async function checkCase(c: AttentionCase, executorName: string, executor: Executor): Promise<string[]> {
  const m = materialize(c);
  const ref = referenceAttention(c.config, m.raw, m.inputs);
  const problems: string[] = [];
  const untapped = await runCase(m, executor, false);
  if (!untapped.fused) problems.push("untapped: the plan did not fuse the attention chain");
  const check = (label: string, got: Tensor, name: ReferenceName) => {
    const p = mismatch(label, dense(got), ref[name], toleranceFor(ref[name]));
    if (p) problems.push(p);
  };
  check("output (untapped, fused)", untapped.output, "output");
  const tapped = await runCase(m, executor, true);
  check("output (tapped, unfused)", tapped.output, "output");
  for (const name of NAMES) {
    const t = tapped.taps.get(name);
    if (m.graph.has(name) && !t) problems.push(`tap ${name}: nothing delivered`);
    if (t) check(`tap ${name}`, t, name);
  }
  return problems.map((p) => `${executorName}: ${p}\n  case: ${describeCase(c)}`);
}

export function dense(t: Tensor): Dense {
  return { shape: t.shape, data: t.toFloat32Array() };
}
