// Writing into a run (activation patching, TransformerLens's hooks that edit a value): an override replaces a node's
// value with a tensor, or with what a function makes of the computed value, and every reader downstream sees the
// override's value on whichever executor it runs (uploaded there). Overrides decide lowering as taps do: a patched node
// is materialised by a step of its own and never fused away (explain() says "patched").
import { GraphValidationError, type Executor, type OpGraph } from "@attngraph/graph";
import { AttnGraphError, Tensor, formatShape, sameShape, type AnyTensor, type Shape } from "@attngraph/tensor";

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
 * An override that could not be applied: it is not a tensor or a function, it threw, returned no tensor, a tensor of
 * another shape or dtype, or NaN the node's value did not hold. `subject` names the node. A run rejects before any
 * reader of the node runs; `patch()` throws at once. The session stays usable.
 */
export class OverrideError extends AttnGraphError {
  readonly node: string;
  /** `runId`: the run that met it; undefined for `patch()`, refused before any run. */
  constructor(runId: number | undefined, node: string, what: string, expected: string, got: string, cause?: unknown) {
    super(
      "override",
      `${runId === undefined ? "patch: " : `run ${runId}: `}override of node ${node}: ${what}, expected ${expected}, got ${got}`,
      { subject: node, expected, got, ...(cause === undefined ? {} : { cause }) },
    );
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

/** What `patch()` and a run's `override` take: a Tensor (by its brand: an object with a `shape` is not one) or a function. */
export function checkOverride(override: unknown, node: string, runId?: number): asserts override is Override {
  if (typeof override !== "function" && !Tensor.isTensor(override)) {
    throw new OverrideError(
      runId,
      node,
      "invalid override",
      "a Tensor (@attngraph/tensor) or a function (value, ctx) => tensor",
      kindOf(override),
    );
  }
}

/**
 * The value readers of `node` see after its overrides, on `executor`: each override in turn (a function gets the value
 * before it as a host tensor), the result checked (a float32 tensor of `shape`; NaN only where the value it replaced
 * held NaN) and uploaded. `value` is the computed value; it stays with the caller (the run releases it with everything
 * else it holds). A function's promise is raced against `stop`: an override that never settles cannot hold a run past
 * its abort (or its session's dispose).
 */
export async function applyOverrides(
  runId: number,
  node: string,
  shape: Shape,
  executor: Executor,
  value: unknown,
  overrides: readonly Override[],
  stop: Stop,
): Promise<unknown> {
  /** The value the next override replaces, on the host; downloaded only when a function or a NaN check needs it. */
  let current: AnyTensor | undefined;
  const before = async (): Promise<AnyTensor> => (current ??= await executor.download(value));
  for (const o of overrides) {
    let got: unknown;
    if (typeof o === "function") {
      const host = (await before()).clone();
      try {
        got = await stop.race(Promise.resolve().then(() => o(host as Tensor, { runId, node, shape })));
      } catch (e) {
        if (stop.stopped(e)) throw e;
        throw new OverrideError(
          runId,
          node,
          "the override function threw",
          "a tensor",
          e instanceof Error ? e.message : String(e),
          e,
        );
      }
    } else {
      got = o;
    }
    current = await checkResult(runId, node, shape, got, before);
  }
  return executor.upload(current!);
}

/** How a run in flight stops an override that is still pending: its signal's abort, its session's dispose. */
export interface Stop {
  /** `p`, or a rejection with the run's AbortError (or SessionDisposedError) as soon as the run must stop. */
  race<T>(p: Promise<T>): Promise<T>;
  /** Whether `e` is that rejection (not the override's own failure). */
  stopped(e: unknown): boolean;
}

/**
 * `got` as the node's value, checked: a Tensor of `shape`, float32, and NaN only at elements where `replaced` (the
 * value the override replaced) held NaN. NaN in a run's own data is data: an identity or an ablation must pass it on,
 * but NaN the override itself introduced is refused (it would poison every reader without an error).
 */
async function checkResult(
  runId: number,
  node: string,
  shape: Shape,
  got: unknown,
  replaced: () => Promise<AnyTensor>,
): Promise<AnyTensor> {
  if (!Tensor.isTensor(got))
    throw new OverrideError(runId, node, "not a tensor", `a float32 Tensor ${formatShape(shape)}`, kindOf(got));
  if (!sameShape(got.shape, shape))
    throw new OverrideError(runId, node, "wrong shape", formatShape(shape), formatShape(got.shape));
  if (got.dtype !== "float32") throw new OverrideError(runId, node, "wrong dtype", "float32", got.dtype);
  const data = got.toFloat32Array();
  let was: Float32Array | undefined;
  for (let i = 0; i < data.length; i++) {
    if (!Number.isNaN(data[i]!)) continue;
    was ??= (await replaced()).toFloat32Array();
    if (!Number.isNaN(was[i]!))
      throw new OverrideError(
        runId,
        node,
        "NaN in the override's value where the node's value had none",
        "numbers (NaN only where the value replaced held NaN)",
        `NaN at element ${i}`,
      );
  }
  return got;
}

function kindOf(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  if (typeof x === "object") return `an object (${Object.keys(x).slice(0, 4).join(", ") || "no keys"}), not a Tensor`;
  return typeof x;
}
