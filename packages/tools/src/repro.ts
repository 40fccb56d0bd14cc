// A repro: one node cut out of a graph with the reference's values of its inputs, run alone on two executors. Built by
// diffExecutors for the first node that disagrees; read back and replayed by replayRepro (and `attngraph run`).
import { OpGraph, fromJSON, toJSON, type Executor, type OpRegistry } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, type AnyTensor, type Tensor, type Tolerance } from "@attngraph/tensor";
import { compareValues } from "./compare-values.js";
import { REPRO_FORMAT, REPRO_VERSION, type NodeComparison, type Repro } from "./diff-types.js";
import { ReproFormatError, tensorFromJSON, tensorToJSON, type TensorJSON } from "./tensor-json.js";

type Outcome = { readonly tensor: Tensor } | { readonly error: string };

/**
 * The repro of `node` of `graph` on `inputs` (the reference's values, by value name), with the node's output alone on
 * `reference` and on `other`, and how those two compare.
 */
export async function buildRepro(
  graph: OpGraph,
  node: string,
  inputs: ReadonlyMap<string, AnyTensor>,
  reference: Executor,
  other: Executor,
  tolerance: Tolerance,
  source?: string,
): Promise<{ repro: Repro; alone: NodeComparison }> {
  const n = graph.node(node);
  const single = OpGraph.create(graph.registry, {
    inputs: [...inputs].map(([name, t]) =>
      t.dtype === "int32" ? { name, shape: [...t.shape], dtype: "int32" as const } : { name, shape: [...t.shape] },
    ),
    weights: [],
    nodes: [{ name: node, kind: n.kind, inputs: n.inputs, attrs: n.attrs }],
    outputs: [node],
  });
  const feed = Object.fromEntries(inputs);
  const refOut = await runSingle(single, feed, reference);
  const otherOut = await runSingle(single, feed, other);
  const repro: Repro = {
    format: REPRO_FORMAT,
    version: REPRO_VERSION,
    node,
    kind: n.kind,
    reference: reference.name,
    executor: other.name,
    tolerance: { abs: tolerance.abs, rel: tolerance.rel },
    graph: toJSON(single),
    inputs: Object.fromEntries([...inputs].map(([name, t]) => [name, tensorToJSON(t)])),
    outputs: { [reference.name]: outcomeJSON(refOut), [other.name]: outcomeJSON(otherOut) },
    ...(source === undefined ? {} : { source }),
  };
  return { repro, alone: judge(other.name, refOut, otherOut, tolerance) };
}

/** The node of a single-node graph run once on one executor: its output, or the message of the error it failed with. */
async function runSingle(
  graph: OpGraph,
  inputs: Readonly<Record<string, AnyTensor>>,
  executor: Executor,
): Promise<Outcome> {
  try {
    const session = await compile(graph, { executors: [executor] });
    try {
      const out = await session.run(inputs);
      return { tensor: out[graph.outputs[0]!]! };
    } finally {
      await session.dispose();
    }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

function outcomeJSON(o: Outcome): TensorJSON | { readonly error: string } {
  return "tensor" in o ? tensorToJSON(o.tensor) : { error: o.error };
}

/** `other`'s outcome against the reference's. A reference that failed makes the node "failed" too: nothing to compare with. */
function judge(executor: string, ref: Outcome, got: Outcome, tolerance: Tolerance): NodeComparison {
  if ("error" in got || "error" in ref) {
    const reason = "error" in got ? got.error : `the reference failed: ${(ref as { error: string }).error}`;
    const size = "tensor" in ref ? ref.tensor.size : 0;
    return { executor, ranOn: executor, status: "failed", maxAbs: NaN, maxRel: NaN, failures: 0, size, reason };
  }
  return { executor, ranOn: executor, ...compareValues(got.tensor, ref.tensor, tolerance) };
}

export interface ReplayOptions {
  /** Executors to replay on, found by the names the repro records (its reference and its executor). */
  readonly executors: readonly Executor[];
  /** Where the node's op kind is declared, for a user op (default: the built-in ops). */
  readonly registry?: OpRegistry;
}

export interface ReplayResult {
  readonly node: string;
  readonly kind: string;
  readonly reference: string;
  readonly executor: string;
  /** The executor's fresh output against the reference's fresh output. */
  readonly comparison: NodeComparison;
  /** Whether the disagreement recorded in the file happened again (the executor disagrees with, or failed unlike, the reference). */
  readonly reproduced: boolean;
  /** Per executor: whether its fresh output equals the recorded one element for element, NaN matching NaN ("error": it failed, then or now). */
  readonly sameAsRecorded: Readonly<Record<string, boolean | "error">>;
}

/** Reads a repro (an object or JSON text), every field checked: a ReproFormatError names the field at fault. */
export function readRepro(
  json: unknown,
  registry?: OpRegistry,
): {
  repro: Repro;
  graph: OpGraph;
  inputs: Record<string, AnyTensor>;
  outputs: Record<string, Tensor | { error: string }>;
} {
  let doc = json;
  if (typeof json === "string") {
    try {
      doc = JSON.parse(json);
    } catch (e) {
      throw new ReproFormatError("$", "not valid JSON", "a repro document", (e as Error).message);
    }
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new ReproFormatError("$", "not a repro", "an object", Array.isArray(doc) ? "an array" : typeof doc);
  const r = doc as Record<string, unknown>;
  if (r.format !== REPRO_FORMAT)
    throw new ReproFormatError("$.format", "not an attngraph repro", JSON.stringify(REPRO_FORMAT), String(r.format));
  if (r.version !== REPRO_VERSION)
    throw new ReproFormatError("$.version", "unknown version", String(REPRO_VERSION), String(r.version));
  for (const key of ["node", "kind", "reference", "executor"] as const) {
    if (typeof r[key] !== "string" || r[key] === "")
      throw new ReproFormatError(`$.${key}`, "missing or not a string", "a non-empty string", String(r[key]));
  }
  const tol = r.tolerance as Record<string, unknown> | undefined;
  for (const k of ["abs", "rel"] as const) {
    if (typeof tol?.[k] !== "number" || !((tol[k] as number) >= 0))
      throw new ReproFormatError(`$.tolerance.${k}`, "invalid tolerance", "a number >= 0", String(tol?.[k]));
  }
  let graph: OpGraph;
  try {
    graph = fromJSON(r.graph, registry);
  } catch (e) {
    const subject = AttnGraphError.isInstance(e) ? (e.subject ?? "$") : "$";
    throw new ReproFormatError(
      `$.graph${subject.startsWith("$") ? subject.slice(1) : ` (${subject})`}`,
      "not a valid graph",
      "an attngraph graph of one node",
      e instanceof Error ? e.message : String(e),
    );
  }
  if (graph.nodes.length !== 1 || graph.nodes[0]!.name !== r.node || graph.nodes[0]!.kind !== r.kind) {
    throw new ReproFormatError(
      "$.graph.nodes",
      "not the repro's node",
      `one node ${String(r.node)} of kind ${String(r.kind)}`,
      graph.nodes.map((n) => `${n.name} (${n.kind})`).join(", "),
    );
  }
  const inputs: Record<string, AnyTensor> = {};
  const given = isRecord(r.inputs) ? r.inputs : undefined;
  if (!given) throw new ReproFormatError("$.inputs", "missing", "an object of tensors by input name", typeof r.inputs);
  for (const decl of graph.inputs) {
    if (!Object.hasOwn(given, decl.name))
      throw new ReproFormatError(`$.inputs.${decl.name}`, "missing input", "a tensor", "nothing");
    inputs[decl.name] = tensorFromJSON(given[decl.name], `$.inputs.${decl.name}`);
  }
  const outputs: Record<string, Tensor | { error: string }> = {};
  const recorded = isRecord(r.outputs) ? r.outputs : undefined;
  for (const name of [r.reference as string, r.executor as string]) {
    const o = recorded?.[name];
    if (o === undefined)
      throw new ReproFormatError(`$.outputs.${name}`, "missing output", "a tensor or { error }", "nothing");
    outputs[name] =
      isRecord(o) && typeof o.error === "string"
        ? { error: o.error }
        : (tensorFromJSON(o, `$.outputs.${name}`) as Tensor);
  }
  return { repro: doc as Repro, graph, inputs, outputs };
}

/** Runs a repro's node again on its two executors and says whether the recorded disagreement happens again. */
export async function replayRepro(json: unknown, options: ReplayOptions): Promise<ReplayResult> {
  const { repro, graph, inputs, outputs } = readRepro(json, options.registry);
  const find = (name: string): Executor => {
    const e = options.executors.find((x) => x.name === name);
    if (!e)
      throw new AttnGraphError(
        "replay",
        `replay: the repro ran on ${name}; no executor of that name was given (given: ${options.executors.map((x) => x.name).join(", ") || "none"})`,
        { subject: name },
      );
    return e;
  };
  const reference = find(repro.reference);
  const executor = find(repro.executor);
  const fresh = {
    [reference.name]: await runSingle(graph, inputs, reference),
    [executor.name]: await runSingle(graph, inputs, executor),
  };
  const comparison = judge(executor.name, fresh[reference.name]!, fresh[executor.name]!, repro.tolerance);
  const sameAsRecorded: Record<string, boolean | "error"> = {};
  for (const name of [reference.name, executor.name]) {
    const now = fresh[name]!;
    const then = outputs[name]!;
    sameAsRecorded[name] = "error" in now || "error" in then ? "error" : sameValues(now.tensor, then as Tensor);
  }
  return {
    node: repro.node,
    kind: repro.kind,
    reference: reference.name,
    executor: executor.name,
    comparison,
    reproduced: comparison.status !== "agree",
    sameAsRecorded,
  };
}

/** Equal shapes and values (NaN = NaN; JSON keeps neither NaN payloads nor the sign of zero, so bits are not compared). */
function sameValues(a: Tensor, b: Tensor): boolean {
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return false;
  const x = a.toFloat32Array();
  const y = b.toFloat32Array();
  return x.every((v, i) => v === y[i] || (Number.isNaN(v) && Number.isNaN(y[i]!)));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
