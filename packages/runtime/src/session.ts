import { GraphValidationError, type Executor } from "@attngraph/graph";
import { explain, resolveShapes, type Plan } from "@attngraph/scheduler";
import { formatShape, type Shape, type Tensor } from "@attngraph/tensor";
import { Observable, Subject } from "rxjs";
import { AbortError, RunError } from "./errors.js";
import type { SessionEvent, TapEvent } from "./events.js";
import { TapRegistry, type TapSelector } from "./taps.js";
import { yieldToEventLoop } from "./yield.js";

export interface RunOptions {
  /** Aborting rejects the run with an AbortError between steps and emits a run-cancelled event. */
  readonly signal?: AbortSignal;
}

/** A value of one run, on the executor that holds it. */
type Held = { readonly executor: string; readonly value: unknown };

/**
 * Runs a lowered plan. Only the session runs things and only it emits events. Runs are independent: each has its own
 * values, so concurrent runs never share scratch state. Weights are uploaded once per executor and reused.
 */
export class Session {
  readonly plan: Plan;
  readonly #weights: Readonly<Record<string, Tensor>>;
  readonly #weightShapes: Record<string, Shape>;
  readonly #uploadedWeights = new Map<string, Promise<unknown>>();
  readonly #events = new Subject<SessionEvent>();
  readonly #taps = new TapRegistry();
  readonly #shapeCache = new Map<string, Map<string, Shape>>();
  readonly #nodeNames: readonly string[];
  #runs = 0;
  #disposed = false;

  /** Run and node start/end with executor and timing, errors and cancellations. Costs nothing while unobserved. */
  readonly events$: Observable<SessionEvent>;

  constructor(plan: Plan, weights: Readonly<Record<string, Tensor>>) {
    this.plan = plan;
    this.#weights = weights;
    this.#weightShapes = Object.fromEntries(Object.entries(weights).map(([k, t]) => [k, t.shape]));
    this.#nodeNames = plan.steps.map((s) => s.node);
    this.events$ = this.#events.asObservable();
  }

  /**
   * An Observable of the selected nodes' tensors, one event per node per run. Only watched nodes are read back from
   * their executor and copied. An unknown name is an error now, not a silent empty stream.
   */
  tap(selector: TapSelector): Observable<TapEvent> {
    const matches = this.#matcher(selector);
    return new Observable<TapEvent>((subscriber) => this.#taps.add(matches, subscriber));
  }

  #matcher(selector: TapSelector): (node: string) => boolean {
    if (typeof selector === "function") return selector;
    const names = typeof selector === "string" ? [selector] : selector;
    for (const n of names) {
      if (!this.#nodeNames.includes(n)) {
        throw new GraphValidationError(`tap ${n}`, "no node of this name", `one of ${this.#nodeNames.join(", ")}`, n);
      }
    }
    const set = new Set(names);
    return (node) => set.has(node);
  }

  /** The plan as text (see `explain` in @attngraph/scheduler). */
  explain(): string {
    return explain(this.plan);
  }

  /**
   * Runs the plan on `inputs` and resolves to the graph outputs (tensors the caller owns). Input problems reject before
   * any step runs; a failing step rejects with a RunError naming the node. Either way the session stays usable.
   */
  async run(inputs: Readonly<Record<string, Tensor>>, options: RunOptions = {}): Promise<Record<string, Tensor>> {
    if (this.#disposed) throw new GraphValidationError("session", "session is disposed", "a live session", "disposed");
    const runId = ++this.#runs;
    const events = this.#events;
    const emit = (e: SessionEvent) => events.observed && events.next(e);
    const t0 = performance.now();
    if (events.observed) emit({ type: "run-start", runId, time: t0 });
    let current: string | undefined;
    const signal = options.signal;
    try {
      if (signal?.aborted) throw new AbortError(runId, undefined, signal.reason);
      const shapes = this.#shapes(inputs);
      const watched = this.#taps.snapshot(this.#nodeNames);
      const values = new Map<string, Held>();
      const onExecutor = new Map<string, unknown>(); // `${executor}\u0000${value}` → value uploaded there
      const valueOn = async (name: string, executor: Executor): Promise<unknown> => {
        const held = values.get(name);
        if (held?.executor === executor.name) return held.value;
        const key = `${executor.name}\u0000${name}`;
        if (onExecutor.has(key)) return onExecutor.get(key);
        let host: Tensor;
        if (held) host = await this.plan.executors.get(held.executor)!.download(held.value);
        else if (name in inputs) host = inputs[name]!;
        else return this.#weightOn(name, executor);
        const v = await executor.upload(host);
        onExecutor.set(key, v);
        return v;
      };

      for (const step of this.plan.steps) {
        current = step.node;
        if (signal) {
          await yieldToEventLoop();
          if (signal.aborted) throw new AbortError(runId, step.node, signal.reason);
        }
        const executor = this.plan.executors.get(step.placement.executor)!;
        const args = await Promise.all(step.inputs.map((v) => (v === undefined ? undefined : valueOn(v, executor))));
        const outShape = shapes.get(step.node)!;
        const start = performance.now();
        if (events.observed) emit({ type: "node-start", runId, node: step.node, kind: step.kind, executor: executor.name, time: start });
        let out: unknown;
        try {
          out = await executor.dispatch({ kind: step.kind, node: step.node, attrs: step.attrs, inputs: args, outShape });
        } catch (e) {
          throw new RunError(runId, step.node, step.kind, executor.name, e);
        }
        values.set(step.node, { executor: executor.name, value: out });
        if (events.observed) {
          emit({ type: "node-end", runId, node: step.node, kind: step.kind, executor: executor.name, shape: outShape, ms: performance.now() - start });
        }
        const subs = watched.get(step.node);
        if (subs) await this.#deliver(runId, step.node, executor, out, subs);
      }

      current = undefined;
      const result: Record<string, Tensor> = {};
      for (const name of this.plan.outputs) {
        const held = values.get(name)!;
        // A copy: an output may be a view of an input or weight, and the caller must own what it gets.
        result[name] = (await this.plan.executors.get(held.executor)!.download(held.value)).clone();
      }
      if (events.observed) emit({ type: "run-end", runId, ms: performance.now() - t0 });
      return result;
    } catch (e) {
      if (e instanceof AbortError) emit({ type: "run-cancelled", runId, node: current });
      else emit({ type: "run-error", runId, node: current, error: e });
      throw e;
    }
  }

  async #deliver(runId: number, node: string, executor: Executor, value: unknown, subs: readonly { next(e: TapEvent): void }[]): Promise<void> {
    const tensor = (await executor.download(value)).clone();
    // A subscriber that throws does not fail the run or starve the others: rxjs catches the throw inside the
    // subscriber and reports it through its `config.onUnhandledError` channel (by default rethrown asynchronously).
    for (const s of subs) s.next({ runId, node, tensor: subs.length > 1 ? tensor.clone() : tensor });
  }

  #shapes(inputs: Readonly<Record<string, Tensor>>): Map<string, Shape> {
    const inputShapes: Record<string, Shape> = {};
    for (const [k, t] of Object.entries(inputs)) {
      if (!t || typeof t !== "object" || !("shape" in t)) {
        throw new GraphValidationError(`input ${k}`, "not a tensor", "a Tensor", typeof t);
      }
      inputShapes[k] = t.shape;
    }
    const key = Object.keys(inputShapes).sort().map((k) => `${k}:${formatShape(inputShapes[k]!)}`).join(";");
    let shapes = this.#shapeCache.get(key);
    if (!shapes) {
      shapes = resolveShapes(this.plan, inputShapes, this.#weightShapes);
      if (this.#shapeCache.size > 64) this.#shapeCache.clear();
      this.#shapeCache.set(key, shapes);
    }
    return shapes;
  }

  #weightOn(name: string, executor: Executor): Promise<unknown> {
    const key = `${executor.name}\u0000${name}`;
    let v = this.#uploadedWeights.get(key);
    if (!v) {
      v = Promise.resolve(executor.upload(this.#weights[name]!));
      this.#uploadedWeights.set(key, v);
    }
    return v;
  }

  /** Completes the event stream and releases executor resources the session holds. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#events.complete();
  }
}
