// Writing into a run (activation patching, TransformerLens's hooks that edit a value): an override replaces a node's
// value with a tensor, or with what a function makes of the computed value, and every reader downstream sees the
// override's value on whichever executor it runs (uploaded there). Overrides decide lowering as taps do: a patched node
// is materialised by a step of its own and never fused away (explain() says "patched").
import { GraphValidationError, type Executor, type OpGraph } from "@attngraph/graph";
import { AttnGraphError, formatShape, sameShape, type AnyTensor, type Shape, type Tensor } from "@attngraph/tensor";

/** What an override function is told about the value it edits. */
export interface OverrideContext {
  readonly runId: number;
  readonly node: string;
  /** The value's concrete shape in this run; the function must return a tensor of this shape. */
  readonly shape: Shape;
}

/** The computed value (a host copy the function may keep or edit) → the value readers downstream see. */
export type OverrideFn = (value: Tensor, ctx: OverrideContext) => AnyTensor | Promise<AnyTensor>;

/** A tensor to use instead of the node's value, or a function of it. */
export type Override = AnyTensor | OverrideFn;

/**
 * An override that could not be applied: it threw, returned no tensor, a tensor of another shape or dtype, or NaN.
 * `subject` names the node. The run rejects before any reader of the node runs; the session stays usable.
 */
export class OverrideError extends AttnGraphError {
  readonly node: string;
  constructor(runId: number, node: string, what: string, expected: string, got: string, cause?: unknown) {
    super("override", `run ${runId}: override of node ${node}: ${what}, expected ${expected}, got ${got}`, { subject: node, expected, got, ...(cause === undefined ? {} : { cause }) });
    this.name = "OverrideError";
    this.node = node;
  }
}

/** Persistent patches (`session.patch`), in the order they were added; each removable on its own. */
/** The overrides of a run with none (most runs): one shared empty map, never changed. */
const NO_OVERRIDES = new Map<string, Override[]>();

export class PatchRegistry {
  readonly #patches: { readonly node: string; readonly override: Override }[] = [];

  add(node: string, override: Override): () => void {
    const entry = { node, override };
    this.#patches.push(entry);
    return () => {
      const i = this.#patches.indexOf(entry);
      if (i >= 0) this.#patches.splice(i, 1);
    };
  }

  /** Node → its overrides for one run: the session's patches first, then the run's own (`run(inputs, { override })`). */
  snapshot(runOverrides: Readonly<Record<string, Override>> | undefined): Map<string, Override[]> {
    if (this.#patches.length === 0 && runOverrides === undefined) return NO_OVERRIDES;
    const out = new Map<string, Override[]>();
    const add = (node: string, o: Override) => out.set(node, [...(out.get(node) ?? []), o]);
    for (const p of this.#patches) add(p.node, p.override);
    if (runOverrides) for (const node of Object.keys(runOverrides)) add(node, runOverrides[node]!);
    return out;
  }
}

/** An override must name a node of the graph (an input is overridden by passing another input). */
export function checkOverrideTarget(graph: OpGraph, node: string, field: string): void {
  if (typeof node !== "string" || !graph.has(node) || graph.roleOf(node) !== "node") {
    throw new GraphValidationError(field, "an override must name a node of the graph", "a node name", String(node));
  }
}

export function checkOverride(override: unknown, field: string): asserts override is Override {
  if (typeof override !== "function" && !isTensor(override)) throw new GraphValidationError(field, "invalid override", "a tensor or a function (value, ctx) => tensor", typeof override);
}

/**
 * The value readers of `node` see after its overrides, on `executor`: each override in turn (a function gets the value
 * before it as a host tensor), the result checked (a float32 tensor of `shape`, no NaN) and uploaded. `value` is the
 * computed value; it stays with the caller (the run releases it with everything else it holds).
 */
export async function applyOverrides(runId: number, node: string, shape: Shape, executor: Executor, value: unknown, overrides: readonly Override[]): Promise<unknown> {
  let current: AnyTensor | undefined;
  for (const o of overrides) {
    let got: unknown;
    if (typeof o === "function") {
      const host = current ? current.clone() : (await executor.download(value)).clone();
      try {
        got = await o(host as Tensor, { runId, node, shape });
      } catch (e) {
        throw new OverrideError(runId, node, "the override function threw", "a tensor", e instanceof Error ? e.message : String(e), e);
      }
    } else {
      got = o;
    }
    current = checkResult(runId, node, shape, got);
  }
  return executor.upload(current!);
}

function checkResult(runId: number, node: string, shape: Shape, got: unknown): AnyTensor {
  if (!isTensor(got)) throw new OverrideError(runId, node, "not a tensor", `a float32 tensor ${formatShape(shape)}`, got === null ? "null" : typeof got);
  if (!sameShape(got.shape, shape)) throw new OverrideError(runId, node, "wrong shape", formatShape(shape), formatShape(got.shape));
  if (got.dtype !== "float32") throw new OverrideError(runId, node, "wrong dtype", "float32", got.dtype);
  const data = got.toFloat32Array();
  for (let i = 0; i < data.length; i++) {
    if (Number.isNaN(data[i]!)) throw new OverrideError(runId, node, "NaN in the override's value", "numbers", `NaN at element ${i}`);
  }
  return got;
}

function isTensor(x: unknown): x is AnyTensor {
  return typeof x === "object" && x !== null && Array.isArray((x as AnyTensor).shape) && typeof (x as AnyTensor).toFloat32Array === "function";
}
