// The per-node executor diff: the same graph, inputs and weights run on each executor with the compared nodes tapped,
// every node's value set against the first executor's, and the first node that disagrees cut out as a repro of that
// node alone. Where validateWith judges each step on the primary's own inputs during a run, this runs each executor
// end to end, as a user would, and then re-runs the culprit alone on the reference's inputs to tell a wrong kernel
// from drift that built up upstream.
import { GraphValidationError, type Executor, type OpGraph } from "@attngraph/graph";
import { DEFAULT_VALIDATE_TOLERANCE, RunError, compile, type Session } from "@attngraph/runtime";
import { AttnGraphError, type AnyTensor, type Tensor, type Tolerance } from "@attngraph/tensor";
import { compareValues } from "./compare-values.js";
import type { DiffOptions, DiffResult, FirstDisagreement, NodeComparison, NodeDiff } from "./diff-types.js";
import { buildRepro } from "./repro.js";

/** What one executor's end-to-end run gave: each compared node's value and where it ran, or where the run failed. */
interface ExecutorRun {
  readonly values: Map<string, Tensor>;
  readonly ranOn: Map<string, string>;
  readonly failure?: { readonly node: string | undefined; readonly message: string };
}

/**
 * Runs `graph` on every executor in `options.executors` and compares each node's value with the first executor's.
 * An executor with no kernel for a node runs that node on the reference instead (the node reports "unsupported"),
 * and a run that fails reports "failed" at its node and "not-run" after it: the other executors go on. The reference
 * itself must run the whole graph (there is nothing to compare against otherwise): a failure there rejects.
 */
export async function diffExecutors(graph: OpGraph, options: DiffOptions): Promise<DiffResult> {
  const { executors, tolerance, compared, tap } = checkOptions(graph, options);
  const [reference, ...others] = executors as [Executor, ...Executor[]];
  const refRun = await runOn(graph, [reference], options, compared, tap);
  if (refRun.failure) {
    throw new AttnGraphError(
      "diff",
      `diff: the reference executor ${reference.name} failed${refRun.failure.node ? ` at node ${refRun.failure.node}` : ""}: ${refRun.failure.message}`,
      {
        subject: refRun.failure.node ?? reference.name,
      },
    );
  }
  const runs: ExecutorRun[] = [];
  // One at a time: executors share the machine, and a run's timing is not what is measured here.
  for (const e of others) runs.push(await runOn(graph, [e, reference], options, compared, tap));

  const nodes: NodeDiff[] = compared.map((node) => {
    const ref = refRun.values.get(node)!;
    const n = graph.node(node);
    const against = others.map((e, i) =>
      compareNode(n.kind, n.attrs, node, e, reference.name, ref, runs[i]!, tolerance),
    );
    return { node, kind: n.kind, shape: ref.shape, against };
  });
  const culprit = firstDisagreement(nodes);
  let first: FirstDisagreement | undefined;
  if (culprit) {
    const { node, executor } = culprit;
    const kind = graph.node(node).kind;
    if (options.repro === false) first = { node, kind, executor, alone: "not-built" };
    else {
      const inputs = await inputValues(graph, node, reference, options, refRun.values);
      const other = executors.find((e) => e.name === executor)!;
      const { repro, alone } = await buildRepro(graph, node, inputs, reference, other, tolerance);
      first = {
        node,
        kind,
        executor,
        alone: alone.status === "disagree" || alone.status === "failed" ? "disagrees" : "agrees",
        repro,
      };
    }
  }
  const ok = !nodes.some((n) =>
    n.against.some((c) => c.status === "disagree" || c.status === "failed" || c.status === "not-run"),
  );
  return {
    reference: reference.name,
    executors: executors.map((e) => e.name),
    tolerance,
    nodes,
    ...(first ? { first } : {}),
    ok,
  };
}

function checkOptions(
  graph: OpGraph,
  options: DiffOptions,
): { executors: readonly Executor[]; tolerance: Tolerance; compared: string[]; tap: "all" | "none" | "list" } {
  if (
    typeof (graph as Partial<OpGraph> | null)?.node !== "function" ||
    !Array.isArray((graph as Partial<OpGraph>).nodes)
  )
    throw new GraphValidationError(
      "diff graph",
      "not a graph",
      "an OpGraph (GraphBuilder.build(), graphFromJSON())",
      graph === null ? "null" : typeof graph,
    );
  if (typeof options !== "object" || options === null)
    throw new GraphValidationError(
      "diff options",
      "missing options",
      "{ executors: [reference, other, ...], inputs, weights? }",
      options === null ? "null" : typeof options,
    );
  const executors = options.executors;
  if (!Array.isArray(executors) || executors.length < 2) {
    throw new GraphValidationError(
      "diff.executors",
      "needs two executors or more",
      "[reference, other, ...]",
      Array.isArray(executors) ? `${executors.length}` : typeof executors,
    );
  }
  const names = executors.map((e) => e.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined)
    throw new GraphValidationError(
      "diff.executors",
      "two executors of the same name",
      "different names (the report tells them apart by name)",
      dup,
    );
  const tolerance = options.tolerance ?? DEFAULT_VALIDATE_TOLERANCE;
  for (const k of ["abs", "rel"] as const) {
    if (typeof tolerance[k] !== "number" || !(tolerance[k] >= 0))
      throw new GraphValidationError(`diff.tolerance.${k}`, "invalid tolerance", "a number >= 0", String(tolerance[k]));
  }
  const tap = options.tap ?? "all";
  if (tap === "all") return { executors, tolerance, compared: graph.nodes.map((n) => n.name), tap };
  if (tap === "none") return { executors, tolerance, compared: [...graph.outputs], tap };
  if (!Array.isArray(tap) || tap.length === 0)
    throw new GraphValidationError(
      "diff.tap",
      "invalid tap",
      '"all", "none" or a non-empty list of node names',
      String(tap),
    );
  for (const n of tap) {
    if (typeof n !== "string" || !graph.has(n) || graph.roleOf(n) !== "node")
      throw new GraphValidationError(`diff.tap ${String(n)}`, "no node of this name", "a node of the graph", String(n));
  }
  // Graph order, whatever order the list came in: "first" means first in the graph.
  const wanted = new Set(tap);
  return { executors, tolerance, compared: graph.nodes.map((n) => n.name).filter((n) => wanted.has(n)), tap: "list" };
}

/** One end-to-end run of `graph` on `executors` (preference order), the compared nodes read back. Never throws for a run failure. */
async function runOn(
  graph: OpGraph,
  executors: readonly Executor[],
  options: DiffOptions,
  compared: readonly string[],
  tap: "all" | "none" | "list",
): Promise<ExecutorRun> {
  const values = new Map<string, Tensor>();
  const ranOn = new Map<string, string>();
  let session: Session;
  try {
    session = await compile(graph, {
      executors: [...executors],
      ...(options.weights ? { weights: options.weights } : {}),
    });
  } catch (e) {
    return { values, ranOn, failure: { node: undefined, message: messageOf(e) } };
  }
  const wanted = new Set(compared);
  const events = session.events$.subscribe((e) => {
    if (e.type === "node-start") ranOn.set(e.node, e.executor);
  });
  // Under "none" the outputs come from run() itself, so no tap changes how the graph is lowered.
  const taps =
    tap === "none"
      ? undefined
      : session.tap((n) => wanted.has(n)).subscribe(({ node, tensor }) => values.set(node, tensor));
  try {
    const outputs = await session.run(options.inputs);
    if (tap === "none") for (const n of compared) values.set(n, outputs[n]!);
    return { values, ranOn };
  } catch (e) {
    return { values, ranOn, failure: { node: e instanceof RunError ? e.node : undefined, message: messageOf(e) } };
  } finally {
    taps?.unsubscribe();
    events.unsubscribe();
    await session.dispose();
  }
}

function compareNode(
  kind: string,
  attrs: Readonly<Record<string, unknown>>,
  node: string,
  executor: Executor,
  reference: string,
  ref: Tensor,
  run: ExecutorRun,
  tolerance: Tolerance,
): NodeComparison {
  const ranOn = run.ranOn.get(node) ?? executor.name;
  const got = run.values.get(node);
  if (!got) {
    const at = run.failure?.node;
    const status = at === node || (at === undefined && run.failure) ? "failed" : "not-run";
    return {
      executor: executor.name,
      ranOn,
      status,
      maxAbs: NaN,
      maxRel: NaN,
      failures: 0,
      size: ref.size,
      reason: run.failure?.message ?? "no value was delivered",
    };
  }
  if (ranOn === reference && ranOn !== executor.name) {
    const support = executor.supports(kind, attrs);
    if (!support.ok)
      return {
        executor: executor.name,
        ranOn,
        status: "unsupported",
        maxAbs: NaN,
        maxRel: NaN,
        failures: 0,
        size: ref.size,
        reason: `unsupported on ${executor.name}: ${support.reason}`,
      };
  }
  return { executor: executor.name, ranOn, ...compareValues(got, ref, tolerance) };
}

function firstDisagreement(nodes: readonly NodeDiff[]): { node: string; executor: string } | undefined {
  for (const n of nodes) {
    const bad = n.against.find((c) => c.status === "disagree" || c.status === "failed");
    if (bad) return { node: n.node, executor: bad.executor };
  }
  return undefined;
}

/** The reference's values of `node`'s inputs: given inputs and weights, tapped nodes, or one more reference run for the rest. */
async function inputValues(
  graph: OpGraph,
  node: string,
  reference: Executor,
  options: DiffOptions,
  tapped: ReadonlyMap<string, Tensor>,
): Promise<Map<string, AnyTensor>> {
  const names = [...new Set(Object.values(graph.node(node).inputs))];
  const out = new Map<string, AnyTensor>();
  const missing: string[] = [];
  for (const n of names) {
    const role = graph.roleOf(n);
    const v = role === "input" ? options.inputs[n] : role === "weight" ? options.weights?.[n] : tapped.get(n);
    if (v) out.set(n, v);
    else if (role === "node") missing.push(n);
    else throw new GraphValidationError(`diff ${role} ${n}`, `no value given for this ${role}`, "a tensor", "nothing");
  }
  if (missing.length) {
    const again = await runOn(graph, [reference], options, missing, "list");
    for (const n of missing) out.set(n, again.values.get(n)!);
  }
  return out;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
