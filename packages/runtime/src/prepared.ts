// What a plan needs per binding of input shapes: every value's concrete shape, the buffer plan, and a pool of arenas
// (one set per run in flight), so memory is allocated once per shape and reused by every later run.
import type { Arena, Executor } from "@attngraph/graph";
import { planBuffers, resolveBinding, type BufferPlan, type Plan } from "@attngraph/scheduler";
import { formatShape, sizeOf, type Shape } from "@attngraph/tensor";
import { MemoryLimitError } from "./errors.js";

export interface Prepared {
  readonly shapes: Map<string, Shape>;
  /** Steps whose symbolic "dim" attributes this binding made concrete: what their kernels get. */
  readonly attrs: Map<string, Readonly<Record<string, unknown>>>;
  readonly memory: BufferPlan;
  /** Free arena sets (executor name → arena); a run takes one and gives it back (`returnArenas`). */
  readonly pool: Map<string, Arena<unknown>>[];
  /** The memory limit this binding was last checked against (checkMemory), so the check runs once per binding. */
  checkedLimit?: number;
  /**
   * Set when the binding left the cache (evicted, or the session disposed). Runs still in flight hold arena sets of
   * it; when they give them back they are freed instead of pooled, since nothing would ever take them again.
   */
  retired?: boolean;
}

const MAX_BINDINGS = 32;

export class PreparedCache {
  readonly #byPlan = new WeakMap<Plan, Map<string, Prepared>>();
  /** Every binding made, so dispose() can free their arenas. */
  readonly #all = new Set<Prepared>();

  /** Frees every pooled arena (the session is going away); arenas of runs in flight are freed when they come back. */
  dispose(): void {
    for (const p of this.#all) retire(p);
    this.#all.clear();
  }

  get(
    plan: Plan,
    inputShapes: Readonly<Record<string, Shape>>,
    weightShapes: Readonly<Record<string, Shape>>,
    dims: Readonly<Record<string, number>> = {},
  ): Prepared {
    // A run with the shapes of the one before (the usual case) finds its binding without building a key.
    const last = this.#last;
    if (
      last !== undefined &&
      last.plan === plan &&
      !last.prepared.retired &&
      sameBinding(last.inputShapes, inputShapes) &&
      sameBinding(last.dims, dims)
    )
      return last.prepared;
    const prepared = this.#get(plan, inputShapes, weightShapes, dims);
    this.#last = { plan, inputShapes: copyBinding(inputShapes), dims: copyBinding(dims), prepared };
    return prepared;
  }

  #last:
    | {
        readonly plan: Plan;
        readonly inputShapes: Record<string, Shape | number>;
        readonly dims: Record<string, Shape | number>;
        readonly prepared: Prepared;
      }
    | undefined;

  #get(
    plan: Plan,
    inputShapes: Readonly<Record<string, Shape>>,
    weightShapes: Readonly<Record<string, Shape>>,
    dims: Readonly<Record<string, number>>,
  ): Prepared {
    let byKey = this.#byPlan.get(plan);
    if (!byKey) this.#byPlan.set(plan, (byKey = new Map()));
    const key = [
      ...Object.keys(inputShapes)
        .sort()
        .map((k) => `${k}:${inputShapes[k]!.join(",")}`),
      ...Object.keys(dims)
        .sort()
        .map((k) => `=${k}:${dims[k]}`),
    ].join(";");
    let p = byKey.get(key);
    if (!p) {
      const { shapes, attrs } = resolveBinding(plan, inputShapes, weightShapes, dims);
      const memory = planBuffers(plan, shapes, (name) => typeof plan.executors.get(name)?.createArena === "function");
      // Bounded: a stream of ever-new shapes must not keep every arena alive.
      if (byKey.size >= MAX_BINDINGS) {
        const oldest = byKey.keys().next().value!;
        retire(byKey.get(oldest)!);
        this.#all.delete(byKey.get(oldest)!);
        byKey.delete(oldest);
      }
      byKey.set(key, (p = { shapes, attrs, memory, pool: [] }));
      this.#all.add(p);
    }
    return p;
  }
}

/** Whether two bindings (name → shape or dim size) name the same things with the same values. */
function sameBinding(
  a: Readonly<Record<string, Shape | number>>,
  b: Readonly<Record<string, Shape | number>>,
): boolean {
  let n = 0;
  // Own keys only (not `for in`: an enumerable property someone put on Object.prototype is no input).
  for (const k of Object.keys(b)) {
    const x = a[k];
    const y = b[k]!;
    if (x === undefined) return false;
    if (typeof y === "number" || typeof x === "number") {
      if (x !== y) return false;
    } else if (x.length !== y.length || x.some((d, i) => d !== y[i])) return false;
    n++;
  }
  return n === Object.keys(a).length;
}

/** A copy the caller cannot change afterwards (shapes are arrays the caller owns). */
function copyBinding(b: Readonly<Record<string, Shape | number>>): Record<string, Shape | number> {
  const out: Record<string, Shape | number> = Object.create(null) as Record<string, Shape | number>;
  for (const k of Object.keys(b)) {
    const v = b[k]!;
    out[k] = typeof v === "number" ? v : [...v];
  }
  return out;
}

function retire(p: Prepared): void {
  p.retired = true;
  for (const set of p.pool.splice(0)) freeArenas(set);
}

function freeArenas(set: ReadonlyMap<string, Arena<unknown>>): void {
  for (const arena of set.values()) arena.dispose?.();
}

/** Takes a free arena set from the pool or makes one. */
export function acquireArenas(p: Prepared, executors: ReadonlyMap<string, Executor>): Map<string, Arena<unknown>> {
  const free = p.pool.pop();
  if (free) return free;
  const set = new Map<string, Arena<unknown>>();
  for (const [name, elements] of p.memory.arenaElements)
    set.set(name, executors.get(name)!.createArena!(elements) as Arena<unknown>);
  return set;
}

/** A run is done with its arena set: back to the pool, or freed when the binding is gone (see `Prepared.retired`). */
export function returnArenas(p: Prepared, set: Map<string, Arena<unknown>>): void {
  if (p.retired) freeArenas(set);
  else p.pool.push(set);
}

/** The default of `compile(..., { maxArenaBytes })`: 4 GiB, past what a browser tab or a WebGPU buffer can hold. */
export const DEFAULT_MAX_ARENA_BYTES = 4 * 1024 ** 3;

/**
 * Refuses a binding whose memory would pass `limit` bytes, before any of it is allocated: any one value a step computes
 * or copies (views cost nothing), and each executor's planned arena. Names the largest value at fault.
 */
export function checkMemory(runId: number, plan: Plan, p: Prepared, limit: number): void {
  if (p.checkedLimit === limit) return;
  let largest: { node: string; bytes: number } | undefined;
  for (const step of plan.steps) {
    if (step.layout === "view") continue;
    const bytes = sizeOf(p.shapes.get(step.node) ?? []) * 4;
    if (bytes > limit)
      throw new MemoryLimitError(
        runId,
        `node ${step.node}`,
        `its output ${formatShape(p.shapes.get(step.node)!)} (float32)`,
        bytes,
        limit,
      );
    if (!largest || bytes > largest.bytes) largest = { node: step.node, bytes };
  }
  for (const [executor, elements] of p.memory.arenaElements) {
    if (elements * 4 > limit) {
      throw new MemoryLimitError(
        runId,
        `arena on ${executor}`,
        `the planned arena (largest value: node ${largest?.node ?? "?"})`,
        elements * 4,
        limit,
      );
    }
  }
  p.checkedLimit = limit;
}
