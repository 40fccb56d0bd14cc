import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { explain, lower, type BufferPlan, type LowerOptions, type Plan } from "@attngraph/scheduler";
import { UnsupportedError, type AnyTensor, type Shape, type Tensor } from "@attngraph/tensor";
import { Observable, Subject } from "rxjs";
import { AbortError, SessionDisposedError } from "./errors.js";
import type { SessionEvent, TapEvent } from "./events.js";
import { checkObjectOption } from "./check-option.js";
import { checkInputs, checkWeights } from "./check-values.js";
import { acquireArenas, checkMemory, DEFAULT_MAX_ARENA_BYTES, PreparedCache, returnArenas } from "./prepared.js";
import { DEFAULT_TAP_POLICY, TapRegistry, type TapPolicy, type TapSelector, type Watcher } from "./taps.js";
import { matcherOf, withCheckedRunTap } from "./tap-selectors.js";
import { WeightStore, type Resident } from "./weights.js";
import type { Validation } from "./validate.js";
import { dropoutStepOf, withDropoutStep } from "./dropout-steps.js";
import { checkOverride, checkOverrideTarget, PatchRegistry, type Override } from "./overrides.js";
import type { RunOptions, SessionOptions } from "./run-options.js";
import type { Held, RunContext } from "./run-context.js";
import { runSteps, type StepEnv } from "./step-loop.js";

export type { RunOptions, SessionOptions } from "./run-options.js";

const NO_NODES: ReadonlySet<string> = new Set();
/** #planFor's key of the plan with nothing watched and nothing patched. */
const PLAIN_KEY = "\u0001";

/**
 * Runs a lowered plan. Only the session runs things and only it emits events. Runs are independent: each has its own
 * values, so concurrent runs never share scratch state. Weights are copied at compile, uploaded once per executor and
 * reused; `setWeights()` is the one way to change them (see weights.ts).
 */
export class Session {
  readonly graph: OpGraph;
  readonly #options: LowerOptions;
  readonly #weights: WeightStore;
  readonly #weightShapes: Readonly<Record<string, Shape>>;
  readonly #events = new Subject<SessionEvent>();
  readonly #taps = new TapRegistry();
  readonly #patches = new PatchRegistry();
  readonly #plans = new Map<string, Plan>();
  readonly #prepared = new PreparedCache();
  readonly #nodeNames: readonly string[];
  readonly #maxArenaBytes: number;
  readonly #tapPolicy: TapPolicy;
  readonly #updates: ReadonlyMap<string, string>;
  readonly #checkNumerics: boolean;
  readonly #validation: Validation | undefined;
  readonly #dropoutMasks: "per-run" | "fixed";
  /** Settles when the last run that updates weights has (runs with `updates` take turns). */
  #inTurn: Promise<void> = Promise.resolve();
  #runs = 0;
  #tapCount = 0;
  /** Aborted by dispose(): whether the session is disposed, and what stops runs waiting on user code (an override). */
  readonly #disposal = new AbortController();
  /** What the step loop reads of this session (step-loop.ts). */
  readonly #stepEnv: StepEnv;

  get #disposed(): boolean {
    return this.#disposal.signal.aborted;
  }

  /** Run and node start/end with executor and timing, errors and cancellations. Costs nothing while unobserved. */
  readonly events$: Observable<SessionEvent>;

  /** `weights` were checked by compile(); the session copies them (see weights.ts). */
  constructor(
    graph: OpGraph,
    options: LowerOptions,
    weights: ReadonlyMap<string, AnyTensor>,
    sessionOptions: SessionOptions = {},
  ) {
    this.graph = graph;
    this.#options = options;
    this.#maxArenaBytes = sessionOptions.maxArenaBytes ?? DEFAULT_MAX_ARENA_BYTES;
    this.#tapPolicy = { ...DEFAULT_TAP_POLICY, ...sessionOptions.taps };
    this.#updates = sessionOptions.updates ?? new Map();
    this.#checkNumerics = sessionOptions.checkNumerics === true;
    this.#validation = sessionOptions.validation;
    this.#dropoutMasks = sessionOptions.dropoutMasks ?? "per-run";
    this.#weights = new WeightStore(weights);
    this.#weightShapes = this.#weights.shapes(); // setWeights() keeps every shape, so this never changes
    this.#nodeNames = graph.nodes.map((n) => n.name);
    this.events$ = this.#events.asObservable();
    this.#stepEnv = {
      events: this.#events,
      registry: graph.registry,
      checkNumerics: this.#checkNumerics,
      validation: this.#validation,
      tapPolicy: this.#tapPolicy,
      disposal: this.#disposal.signal,
    };
    this.#planFor(new Set());
  }

  /** The plan a run with no taps executes (fused where possible). Runs with taps use a plan that keeps them. */
  get plan(): Plan {
    return this.#planFor(new Set());
  }

  /**
   * Taps, overrides and a run's subset of updates decide lowering: one plan per set of watched, of patched and of
   * updated weights, made on first use and kept. A run that updates only some weights plans only the nodes its outputs
   * and those weights need (a trainer's micro step computes no optimizer update).
   */
  #planFor(
    watched: ReadonlySet<string> | ReadonlyMap<string, unknown>,
    patched: ReadonlySet<string> | ReadonlyMap<string, unknown> = NO_NODES,
    applying?: ReadonlySet<string>,
  ): Plan {
    // The untapped, unpatched plan (nearly every run) is found without building a key.
    const plain = watched.size === 0 && patched.size === 0 && applying === undefined;
    const key = plain
      ? PLAIN_KEY
      : `${[...watched.keys()].sort().join("\u0000")}\u0001${[...patched.keys()].sort().join("\u0000")}\u0001${applying ? [...applying].sort().join("\u0000") : "*"}`;
    let plan = this.#plans.get(key);
    if (!plan) {
      const keep = [...this.#updates].filter(([w]) => !applying || applying.has(w)).map(([, node]) => node);
      plan = lower(this.graph, {
        ...this.#options,
        watched: new Set(watched.keys()),
        patched: new Set(patched.keys()),
        keep,
      });
      if (this.#plans.size >= 64) this.#plans.clear();
      this.#plans.set(key, plan);
    }
    return plan;
  }

  /**
   * An Observable of the selected nodes' tensors, one event per node per run. Only watched nodes are read back from
   * their executor and copied. An unknown name is an error now, not a silent empty stream.
   */
  tap(selector: TapSelector): Observable<TapEvent> {
    if (this.#disposed) throw new SessionDisposedError("tap()");
    const matches = matcherOf(selector, this.#nodeNames);
    const label =
      typeof selector === "function"
        ? `tap #${++this.#tapCount} (predicate)`
        : `tap ${typeof selector === "string" ? selector : selector.join(", ")}`;
    return new Observable<TapEvent>((subscriber) => {
      // Subscribed after dispose(): there will be no more runs, so the stream ends now instead of never.
      if (this.#disposed) return subscriber.complete();
      return this.#taps.add(label, matches, subscriber);
    });
  }

  /**
   * Replaces some of the session's weights (by name, each of its declared shape), copying them like compile() does.
   * Every executor sees the new values from the next run on; runs already in flight finish with the old ones, whose
   * executor copies are released when the last of those runs ends.
   */
  setWeights(weights: Readonly<Record<string, AnyTensor>>): void {
    if (this.#disposed) throw new SessionDisposedError("setWeights()");
    this.#weights.replace(checkWeights(this.graph, weights, { partial: true }));
  }

  /**
   * Copies of the session's current weights, by name. A weight a run updated (compile option `updates`) lives on its
   * executor until read: then this is an error naming it, and `readWeights()` is the way.
   */
  getWeights(): Map<string, AnyTensor> {
    if (this.#disposed) throw new SessionDisposedError("getWeights()");
    const resident = this.#weights.resident();
    if (resident.length) {
      throw new UnsupportedError(
        `getWeights() of weights that live on an executor since a run updated them (${resident.slice(0, 4).join(", ")}${resident.length > 4 ? ", …" : ""}): use await session.readWeights()`,
        { subject: "getWeights()" },
      );
    }
    return this.#weights.values();
  }

  /** Copies of the session's current weights, by name, downloading those that live only on an executor. */
  async readWeights(): Promise<Map<string, AnyTensor>> {
    if (this.#disposed) throw new SessionDisposedError("readWeights()");
    return this.#weights.read();
  }

  /**
   * Patches `node` in every run from now on until the returned function is called: its value becomes `override` (a
   * tensor of the node's shape) or what `override(value, ctx)` returns. Readers downstream and taps see the patched
   * value, on every executor. A patched node is never fused away (explain() says "patched"). Patches apply in the order
   * they were added, before a run's own `override`.
   */
  patch(node: string, override: Override): () => void {
    if (this.#disposed) throw new SessionDisposedError("patch()");
    checkOverrideTarget(this.graph, node, `patch ${node}`);
    checkOverride(override, node);
    return this.#patches.add(node, override);
  }

  /**
   * The plan as text (see `explain` in @attngraph/scheduler): by default the untapped plan; with `watched`, the plan a
   * run watching those nodes executes. With `inputs` (the shapes of a run's inputs) it also prints the planned peak
   * memory against the sum of all intermediates.
   */
  explain(
    options: {
      readonly inputs?: Readonly<Record<string, Shape>>;
      readonly watched?: Iterable<string>;
      readonly patched?: Iterable<string>;
      readonly dims?: Readonly<Record<string, number>>;
    } = {},
  ): string {
    const plan = this.#planFor(new Set(options.watched ?? []), new Set(options.patched ?? []));
    return explain(
      plan,
      options.inputs ? this.#prepared.get(plan, options.inputs, this.#weightShapes, options.dims).memory : undefined,
    );
  }

  /** The buffer plan of an untapped run with inputs of these shapes. */
  memoryPlan(inputShapes: Readonly<Record<string, Shape>>, dims: Readonly<Record<string, number>> = {}): BufferPlan {
    return this.#prepared.get(this.plan, inputShapes, this.#weightShapes, dims).memory;
  }

  /**
   * Runs the plan on `inputs` and resolves to the graph outputs (tensors the caller owns). Input problems reject before
   * any step runs; a failing step rejects with a RunError naming the node. Either way the session stays usable.
   */
  async run(inputs: Readonly<Record<string, AnyTensor>>, options: RunOptions = {}): Promise<Record<string, Tensor>> {
    if (this.#disposed) throw new SessionDisposedError("run()");
    if (this.#updates.size === 0) return this.#run(inputs, options);
    // Runs that update weights go one after another: each must start from the weights the one before it made (two at
    // once would both start from the same values and the second would overwrite the first's update).
    const before = this.#inTurn;
    let done!: () => void;
    this.#inTurn = new Promise<void>((resolve) => (done = resolve));
    try {
      await before;
      if (this.#disposed) throw new SessionDisposedError("run()");
      return await this.#run(inputs, options);
    } finally {
      done();
    }
  }

  async #run(inputs: Readonly<Record<string, AnyTensor>>, options: RunOptions): Promise<Record<string, Tensor>> {
    const runId = ++this.#runs;
    const events = this.#events;
    const emit = (e: SessionEvent) => events.observed && events.next(e);
    const t0 = performance.now();
    if (events.observed) emit({ type: "run-start", runId, time: t0 });
    let current: string | undefined;
    const signal = options?.signal;
    let watched: Map<string, Watcher[]> | undefined;
    try {
      if (signal?.aborted) throw new AbortError(runId, undefined, signal.reason);
      const byName = checkInputs(this.graph, inputs);
      const applying = this.#applyingOf(options?.updates);
      const overrides = this.#overridesOf(runId, options?.override);
      const snap = this.#taps.snapshot(this.#nodeNames);
      watched = snap.watched;
      if (snap.failed.length) throw snap.failed[0]!;
      const runTap = options?.tap;
      if (runTap !== undefined) watched = withCheckedRunTap(watched, runTap, this.#nodeNames);
      const plan = this.#planFor(watched, overrides, applying);
      const prepared = this.#prepared.get(plan, shapesOf(byName), this.#weightShapes, options?.dims);
      const dropoutStep = dropoutStepOf(options?.dropoutStep, this.#dropoutMasks, runId - 1);
      checkMemory(runId, plan, prepared, this.#maxArenaBytes); // before the arenas below are allocated
      const arenas = acquireArenas(prepared, plan.executors);
      const weights = this.#weights.lease();
      let result: Record<string, Tensor>;
      try {
        const attrs = withDropoutStep(plan, this.graph.registry, prepared.attrs, dropoutStep);
        const run = {
          runId,
          plan,
          shapes: prepared.shapes,
          attrs,
          memory: prepared.memory,
          arenas,
          inputs: byName,
          weights,
          watched,
          overrides,
          signal,
          t0,
          applying,
        };
        const done = await this.#execute(run, (node) => (current = node));
        result = done.outputs;
        // Only a run that finished changes the weights: a failed or cancelled one leaves them as they were.
        if (done.kept.size) {
          // dispose() came while the outputs were read back: the new values have no session to go to.
          if (this.#disposed) {
            for (const r of done.kept.values()) r.executor.release?.(r.value);
            throw new SessionDisposedError(`run ${runId}`, current);
          }
          this.#weights.assign(done.kept);
        }
      } finally {
        returnArenas(prepared, arenas);
        weights.release();
      }
      const ms = performance.now() - t0;
      this.#settleTaps(watched);
      if (events.observed) emit({ type: "run-end", runId, ms });
      return result;
    } catch (e) {
      if (watched) this.#settleTaps(watched);
      if (e instanceof AbortError) emit({ type: "run-cancelled", runId, node: current });
      else emit({ type: "run-error", runId, node: current, error: e });
      throw e;
    }
  }

  /** RunOptions.updates as a set, each name checked against compile's `updates`. */
  #applyingOf(updates: readonly string[] | undefined): ReadonlySet<string> | undefined {
    if (updates === undefined) return undefined;
    if (!Array.isArray(updates))
      throw new GraphValidationError(
        "run options.updates",
        "invalid list of weights to update",
        "a list of weight names",
        typeof updates,
      );
    for (const w of updates) {
      if (!this.#updates.has(w))
        throw new GraphValidationError(
          "run options.updates",
          "not a weight this session updates",
          [...this.#updates.keys()].join(", ") || "none (compile without updates)",
          String(w),
        );
    }
    return new Set(updates);
  }

  async #execute(
    run: RunContext,
    setCurrent: (node: string | undefined) => void,
  ): Promise<{ outputs: Record<string, Tensor>; kept: Map<string, Resident> }> {
    const { plan } = run;
    const values = new Map<string, Held>();
    const onExecutor = new Map<string, Held>(); // `${executor}\u0000${value}` → value uploaded there
    try {
      const outputs = await runSteps(this.#stepEnv, run, values, onExecutor, setCurrent);
      // The updated weights' new values stay on their executors: taken out of what the run gives back below.
      const kept = new Map<string, Resident>();
      for (const [weight, node] of this.#updates) {
        if (run.applying && !run.applying.has(weight)) continue; // not planned in this run
        const held = values.get(node)!;
        values.delete(node);
        kept.set(weight, { executor: plan.executors.get(held.executor)!, value: held.value });
      }
      return { outputs, kept };
    } finally {
      // Everything this run got from an executor goes back to it (outputs and taps were copied out already).
      for (const held of values.values()) plan.executors.get(held.executor)!.release?.(held.value);
      for (const held of onExecutor.values()) plan.executors.get(held.executor)!.release?.(held.value);
    }
  }

  /** This run's overrides by node (the session's patches, then the run's), every name and value checked. */
  #overridesOf(runId: number, runOverrides: Readonly<Record<string, Override>> | undefined): Map<string, Override[]> {
    if (runOverrides !== undefined) {
      checkObjectOption(
        runOverrides,
        "run options.override",
        "invalid overrides",
        "an object of node name → tensor or function",
      );
      for (const node of Object.keys(runOverrides)) {
        checkOverrideTarget(this.graph, node, `override ${node}`);
        checkOverride(runOverrides[node], node, runId);
      }
    }
    return this.#patches.snapshot(runOverrides);
  }

  /**
   * "settle" delivery: hands every pending event of this run's subscribers over before the run settles. A subscriber
   * that throws does not fail the run or starve the others: rxjs catches the throw inside the subscriber and reports it
   * through its `config.onUnhandledError` channel (by default rethrown asynchronously).
   */
  #settleTaps(watched: ReadonlyMap<string, readonly Watcher[]>): void {
    if (watched.size === 0) return;
    for (const w of new Set([...watched.values()].flat())) if (w.settlesWith(this.#tapPolicy)) w.flush();
  }

  /**
   * Completes the event stream and every tap, and lets go of the session's plans, arenas and weights. A run in flight
   * rejects with a SessionDisposedError before its next step, and what it holds is released when it stops.
   */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposal.abort();
    this.#taps.completeAll();
    this.#events.complete();
    this.#prepared.dispose();
    await this.#weights.dispose();
  }
}

function shapesOf(inputs: ReadonlyMap<string, AnyTensor>): Record<string, Shape> {
  const out: Record<string, Shape> = Object.create(null) as Record<string, Shape>;
  for (const [name, t] of inputs) out[name] = t.shape;
  return out;
}
