import { GraphValidationError, yieldToEventLoop, type Arena, type Executor, type OpGraph } from "@attngraph/graph";
import { explain, lower, type BufferPlan, type LowerOptions, type Plan } from "@attngraph/scheduler";
import { UnsupportedError, type AnyTensor, type Shape, type Tensor } from "@attngraph/tensor";
import { Observable, Subject } from "rxjs";
import { AbortError, NumericsError, RunError, SessionDisposedError, TapError } from "./errors.js";
import type { SessionEvent, TapEvent } from "./events.js";
import { checkInputs, checkWeights } from "./check-values.js";
import { acquireArenas, checkMemory, DEFAULT_MAX_ARENA_BYTES, PreparedCache, returnArenas } from "./prepared.js";
import { DEFAULT_TAP_POLICY, TapRegistry, withRunTap, type RunTap, type TapPolicy, type TapSelector, type Watcher } from "./taps.js";
import { WeightStore, type Resident, type WeightLease } from "./weights.js";
import { downloadOwned } from "./download-owned.js";
import { disagreement, ValidationError, type Disagreement, type Validation } from "./validate.js";
import { runStop } from "./run-stop.js";
import { dropoutStepOf, withDropoutStep } from "./dropout-steps.js";
import { applyOverrides, checkOverride, checkOverrideTarget, PatchRegistry, type Override } from "./overrides.js";

const NO_NODES: ReadonlySet<string> = new Set();
/** #planFor's key of the plan with nothing watched and nothing patched. */
const PLAIN_KEY = "\u0001";

export interface RunOptions {
  /**
   * Aborting rejects the run with an AbortError and emits a run-cancelled event: between steps, or inside a long step
   * on executors whose kernels work in chunks (cpu and wasm check the signal between chunks, see KernelCall.signal).
   */
  readonly signal?: AbortSignal;
  /**
   * Node → a tensor to use instead of its value in this run, or a function of the computed value (activation patching).
   * Applied after the session's own patches (`session.patch`); readers downstream and taps see the result.
   */
  readonly override?: Readonly<Record<string, Override>>;
  /**
   * Sizes of symbolic dims no input carries, by name: a decode graph's past length `P` (see `Decoder`, which passes it
   * on every call). A dim an input also binds must agree.
   */
  readonly dims?: Readonly<Record<string, number>>;
  /**
   * This run's own tap: `nodes` watched in this run only, each event handed to `next` before the run settles. Tools
   * that read one run's values (runWithCache) use it: a session tap sees every run started while it is subscribed.
   */
  readonly tap?: RunTap;
  /**
   * The dropout step this run draws its masks with (training-mode dropout: each seed is folded with it, see
   * `dropoutSeedAt`). Default: the run's index in the session (0 for its first run), so each run draws a new mask; the
   * trainer passes its step number. The same step gives the same masks on every executor.
   */
  readonly dropoutStep?: number;
  /**
   * The weights (of compile's `updates`) this run updates, by name; default every one. The nodes only the others need
   * are not run (the run's plan keeps only these updates): a trainer's micro steps of gradient accumulation update the
   * accumulators and compute no optimizer step.
   */
  readonly updates?: readonly string[];
}

/** What a session does beyond lowering: memory limit and tap delivery (see CompileOptions). */
export interface SessionOptions {
  readonly maxArenaBytes?: number;
  readonly taps?: Partial<TapPolicy>;
  /** Weight → the node whose value becomes it after each successful run (checked by compile(); see CompileOptions). */
  readonly updates?: ReadonlyMap<string, string>;
  /** Read back every computed value and fail at the first NaN or ±∞ (see CompileOptions). */
  readonly checkNumerics?: boolean;
  /** Run every step on a second executor too and compare (compile's validateWith, checked). */
  readonly validation?: Validation;
  /** "per-run" (default): each run draws new dropout masks; "fixed": every run the seed's own (see CompileOptions). */
  readonly dropoutMasks?: "per-run" | "fixed";
}


/** A value of one run, on the executor that holds it. */
type Held = { readonly executor: string; readonly value: unknown };

/** Everything one run needs, decided before its first step. */
interface RunContext {
  readonly runId: number;
  /** The plan for this run's set of watched nodes. */
  readonly plan: Plan;
  readonly shapes: ReadonlyMap<string, Shape>;
  /** Steps whose symbolic "dim" attributes this run's binding made concrete: what their kernels get. */
  readonly attrs: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  readonly memory: BufferPlan;
  /** This run's arenas (from the pool), by executor. */
  readonly arenas: ReadonlyMap<string, Arena<unknown>>;
  /** The run's inputs by name (own keys only). */
  readonly inputs: ReadonlyMap<string, AnyTensor>;
  /** The weights this run started with (a later setWeights() does not change a run in flight). */
  readonly weights: WeightLease;
  /** Watched node → its subscribers, snapshotted before the run. */
  readonly watched: ReadonlyMap<string, readonly Watcher[]>;
  /** Patched node → its overrides in order (the session's patches, then the run's), snapshotted before the run. */
  readonly overrides: ReadonlyMap<string, readonly Override[]>;
  readonly signal: AbortSignal | undefined;
  readonly t0: number;
  /** The updated weights this run assigns (RunOptions.updates); undefined: all. */
  readonly applying: ReadonlySet<string> | undefined;
}

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

  get #disposed(): boolean {
    return this.#disposal.signal.aborted;
  }

  /** Run and node start/end with executor and timing, errors and cancellations. Costs nothing while unobserved. */
  readonly events$: Observable<SessionEvent>;

  /** `weights` were checked by compile(); the session copies them (see weights.ts). */
  constructor(graph: OpGraph, options: LowerOptions, weights: ReadonlyMap<string, AnyTensor>, sessionOptions: SessionOptions = {}) {
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
  #planFor(watched: ReadonlySet<string> | ReadonlyMap<string, unknown>, patched: ReadonlySet<string> | ReadonlyMap<string, unknown> = NO_NODES, applying?: ReadonlySet<string>): Plan {
    // The untapped, unpatched plan (nearly every run) is found without building a key.
    const plain = watched.size === 0 && patched.size === 0 && applying === undefined;
    const key = plain ? PLAIN_KEY : `${[...watched.keys()].sort().join("\u0000")}\u0001${[...patched.keys()].sort().join("\u0000")}\u0001${applying ? [...applying].sort().join("\u0000") : "*"}`;
    let plan = this.#plans.get(key);
    if (!plan) {
      const keep = [...this.#updates].filter(([w]) => !applying || applying.has(w)).map(([, node]) => node);
      plan = lower(this.graph, { ...this.#options, watched: new Set(watched.keys()), patched: new Set(patched.keys()), keep });
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
    const matches = this.#matcher(selector);
    const label = typeof selector === "function" ? `tap #${++this.#tapCount} (predicate)` : `tap ${typeof selector === "string" ? selector : selector.join(", ")}`;
    return new Observable<TapEvent>((subscriber) => {
      // Subscribed after dispose(): there will be no more runs, so the stream ends now instead of never.
      if (this.#disposed) return subscriber.complete();
      return this.#taps.add(label, matches, subscriber);
    });
  }

  /** `watched` with the run's own tap added (its selector checked like tap()'s). */
  #withRunTap(watched: Map<string, Watcher[]>, runTap: RunTap): Map<string, Watcher[]> {
    if (typeof runTap !== "object" || runTap === null || typeof runTap.next !== "function") {
      throw new GraphValidationError("run options.tap", "invalid run tap", "{ nodes: a node name, a list of names or a predicate, next: (event) => void }", runTap === null ? "null" : typeof runTap);
    }
    const matches = this.#matcher(runTap.nodes);
    const label = "run options.tap";
    const guarded = (node: string): boolean => {
      try {
        return matches(node);
      } catch (e) {
        throw new TapError(label, node, e);
      }
    };
    return withRunTap(watched, this.#nodeNames, label, guarded, runTap.next);
  }

  #matcher(selector: TapSelector): (node: string) => boolean {
    if (typeof selector === "function") return selector;
    const names = typeof selector === "string" ? [selector] : selector;
    if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) {
      throw new GraphValidationError("tap", "invalid selector", "a node name, a list of node names or a predicate", typeof selector);
    }
    for (const n of names) {
      if (!this.#nodeNames.includes(n)) {
        throw new GraphValidationError(`tap ${n}`, "no node of this name", `one of ${this.#nodeNames.join(", ")}`, n);
      }
    }
    const set = new Set(names);
    return (node) => set.has(node);
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
      throw new UnsupportedError(`getWeights() of weights that live on an executor since a run updated them (${resident.slice(0, 4).join(", ")}${resident.length > 4 ? ", …" : ""}): use await session.readWeights()`, { subject: "getWeights()" });
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
    options: { readonly inputs?: Readonly<Record<string, Shape>>; readonly watched?: Iterable<string>; readonly patched?: Iterable<string>; readonly dims?: Readonly<Record<string, number>> } = {},
  ): string {
    const plan = this.#planFor(new Set(options.watched ?? []), new Set(options.patched ?? []));
    return explain(plan, options.inputs ? this.#prepared.get(plan, options.inputs, this.#weightShapes, options.dims).memory : undefined);
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
    const signal = (options ?? {}).signal;
    let watched: Map<string, Watcher[]> | undefined;
    try {
      if (signal?.aborted) throw new AbortError(runId, undefined, signal.reason);
      const byName = checkInputs(this.graph, inputs);
      const applying = this.#applyingOf((options ?? {}).updates);
      const overrides = this.#overridesOf(runId, (options ?? {}).override);
      const snap = this.#taps.snapshot(this.#nodeNames);
      watched = snap.watched;
      if (snap.failed.length) throw snap.failed[0]!;
      const runTap = (options ?? {}).tap;
      if (runTap !== undefined) watched = this.#withRunTap(watched, runTap);
      const plan = this.#planFor(watched, overrides, applying);
      const prepared = this.#prepared.get(plan, shapesOf(byName), this.#weightShapes, (options ?? {}).dims);
      const dropoutStep = dropoutStepOf((options ?? {}).dropoutStep, this.#dropoutMasks, runId - 1);
      checkMemory(runId, plan, prepared, this.#maxArenaBytes); // before the arenas below are allocated
      const arenas = acquireArenas(prepared, plan.executors);
      const weights = this.#weights.lease();
      let result: Record<string, Tensor>;
      try {
        const attrs = withDropoutStep(plan, this.graph.registry, prepared.attrs, dropoutStep);
        const run = { runId, plan, shapes: prepared.shapes, attrs, memory: prepared.memory, arenas, inputs: byName, weights, watched, overrides, signal, t0, applying };
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
    if (!Array.isArray(updates)) throw new GraphValidationError("run options.updates", "invalid list of weights to update", "a list of weight names", typeof updates);
    for (const w of updates) {
      if (!this.#updates.has(w)) throw new GraphValidationError("run options.updates", "not a weight this session updates", [...this.#updates.keys()].join(", ") || "none (compile without updates)", String(w));
    }
    return new Set(updates);
  }

  async #execute(run: RunContext, setCurrent: (node: string | undefined) => void): Promise<{ outputs: Record<string, Tensor>; kept: Map<string, Resident> }> {
    const { plan } = run;
    const values = new Map<string, Held>();
    const onExecutor = new Map<string, Held>(); // `${executor}\u0000${value}` → value uploaded there
    try {
      const outputs = await this.#steps(run, values, onExecutor, setCurrent);
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

  async #steps(run: RunContext, values: Map<string, Held>, onExecutor: Map<string, Held>, setCurrent: (node: string | undefined) => void): Promise<Record<string, Tensor>> {
    const { plan, inputs, weights } = run;
    const valueOn = async (name: string, executor: Executor): Promise<unknown> => {
      const held = values.get(name);
      if (held?.executor === executor.name) return held.value;
      const key = `${executor.name}\u0000${name}`;
      const uploaded = onExecutor.get(key);
      if (uploaded) return uploaded.value;
      let host: AnyTensor;
      if (held) host = await plan.executors.get(held.executor)!.download(held.value);
      else if (inputs.has(name)) host = inputs.get(name)!;
      else return weights.on(name, executor);
      const v = await executor.upload(host);
      onExecutor.set(key, { executor: executor.name, value: v });
      return v;
    };

    // validateWith: the validator's copies of the values its steps read (the primary's values, moved there).
    const validator = this.#validation?.executor;
    const forValidator = new Map<string, Promise<unknown>>();
    const onValidator = (name: string): Promise<unknown> => {
      let v = forValidator.get(name);
      if (!v) {
        const held = values.get(name);
        if (!held && !inputs.has(name)) return weights.on(name, validator!); // the weight store releases its uploads
        // A copy: a host executor's download may be a view of memory the step about to run overwrites (in place).
        v = (held ? Promise.resolve(plan.executors.get(held.executor)!.download(held.value)) : Promise.resolve(inputs.get(name)!)).then((t) => validator!.upload(t.clone()));
        forValidator.set(name, v);
      }
      return v;
    };
    if (!validator) return this.#stepLoop(run, values, onExecutor, valueOn, setCurrent, undefined);
    try {
      return await this.#stepLoop(run, values, onExecutor, valueOn, setCurrent, onValidator);
    } finally {
      await Promise.all([...forValidator.values()].map((v) => v.then((value) => validator.release?.(value), () => undefined)));
    }
  }

  async #stepLoop(
    run: RunContext,
    values: Map<string, Held>,
    onExecutor: Map<string, Held>,
    valueOn: (name: string, executor: Executor) => Promise<unknown>,
    setCurrent: (node: string | undefined) => void,
    onValidator: ((name: string) => Promise<unknown>) | undefined,
  ): Promise<Record<string, Tensor>> {
    const { runId, plan, shapes, memory, arenas, watched, overrides, signal } = run;
    const attrsOf = (step: Plan["steps"][number]) => run.attrs.get(step.node) ?? step.attrs;
    /** A value already on `executor` (computed there by this run, moved there, or a settled weight upload), or undefined. */
    const readyOn = (name: string, executor: Executor): { readonly value: unknown } | undefined => {
      const held = values.get(name);
      if (held?.executor === executor.name) return held;
      // A weight is never in onExecutor (valueOn takes it from the weight store): asked there first, without a key.
      if (!held && !run.inputs.has(name)) return run.weights.ready(name, executor);
      return onExecutor.get(`${executor.name}\u0000${name}`);
    };
    const events = this.#events;
    const mayHide = new Set<string>(); // values where −∞ is by design (checkNumerics)
    for (const step of plan.steps) {
      setCurrent(step.node);
      // dispose() came while this run was in flight: stop here; #execute releases what the run holds.
      if (this.#disposed) throw new SessionDisposedError(`run ${runId}`, step.node);
      if (signal) {
        await yieldToEventLoop();
        if (signal.aborted) throw new AbortError(runId, step.node, signal.reason);
      }
      const executor = plan.executors.get(step.placement.executor)!;
      // Values already on the executor are taken as they are; only the others (uploads, moves) are awaited, so a
      // step of a small graph costs no microtask per input.
      const args: unknown[] = new Array(step.inputs.length);
      let pending: Promise<void>[] | undefined;
      step.inputs.forEach((v, i) => {
        if (v === undefined) return;
        const ready = readyOn(v, executor);
        if (ready) args[i] = ready.value;
        else (pending ??= []).push(valueOn(v, executor).then((value) => void (args[i] = value)));
      });
      if (pending) await Promise.all(pending);
      const outShape = shapes.get(step.node)!;
      const slot = memory.offsets.get(step.node);
      const arena = slot ? arenas.get(slot.executor) : undefined;
      const out = slot && arena ? arena.view(slot.offset, outShape) : undefined;
      // validateWith: the validator gets this step's inputs now, before the step runs (an in-place kernel overwrites its
      // input), when the validator has a kernel for it at all.
      const checked = onValidator && this.#validation!.executor.supports(step.kind, step.attrs).ok ? await settled(inputsFor(step.inputs, onValidator)) : undefined;
      // The clock is read only for a subscriber (node-end's ms); one that subscribes mid-step sees the next step's.
      const start = events.observed ? performance.now() : -1;
      if (start >= 0) events.next({ type: "node-start", runId, node: step.node, kind: step.kind, executor: executor.name, time: start });
      let value: unknown;
      try {
        // Always the same object shape (out and signal present, maybe undefined): kernels read one monomorphic call.
        const dispatched = executor.dispatch({ kind: step.kind, node: step.node, attrs: attrsOf(step), inputs: args, outShape, out, signal });
        value = isThenable(dispatched) ? await dispatched : dispatched; // a synchronous kernel costs no microtask
        // A kernel that ignored its destination and returned another planned value (an identity returning its input)
        // would alias memory the plan reuses: move it into its own slot.
        if (out !== undefined && value !== out && arena!.holds(value)) value = arena!.copy(value, out);
      } catch (e) {
        // A kernel that saw the signal mid-step threw (KernelCall.signal): the run was aborted, not broken.
        if (signal?.aborted) throw new AbortError(runId, step.node, signal.reason, "during");
        throw new RunError(runId, step.node, step.kind, executor.name, e);
      }
      // validateWith compares the kernel's own result (before any override) with the validator's on the same inputs.
      if (checked) await this.#validate(runId, step, attrsOf(step), executor, value, outShape, checked);
      const patches = overrides.get(step.node);
      if (patches) {
        // The computed value goes back with everything else the run holds; readers see the override's.
        onExecutor.set(`\u0001computed\u0000${step.node}`, { executor: executor.name, value });
        value = await applyOverrides(runId, step.node, outShape, executor, value, patches, runStop(runId, step.node, signal, this.#disposal.signal));
      }
      values.set(step.node, { executor: executor.name, value });
      if (this.#checkNumerics) {
        // −∞ belongs where an op hides entries (OpDef.hidesWithMinusInfinity) and in views and copies of such a value.
        // A step that replaces nodes (fused non-empty) returns none of their hidden entries (attention's output has no
        // −∞); a step a fusion adds beside them (attention-lse, −∞ for a row that sees no key) is its op's own.
        const def = step.fused?.length ? undefined : this.graph.registry.get(step.kind, step.node);
        const source = step.inputs[0];
        if (def?.hidesWithMinusInfinity || (step.layout !== "compute" && source !== undefined && mayHide.has(source))) mayHide.add(step.node);
        // A view shows values its source step was checked for; everything else is read back and scanned.
        if (step.layout !== "view") await this.#checkFinite(runId, step, executor, value, mayHide.has(step.node));
      }
      if (events.observed && start >= 0) {
        events.next({ type: "node-end", runId, node: step.node, kind: step.kind, executor: executor.name, shape: outShape, ms: performance.now() - start });
      }
      const subs = watched.get(step.node);
      if (subs) await this.#enqueue(runId, step.node, executor, value, subs);
    }

    setCurrent(undefined);
    const result: Record<string, Tensor> = {};
    for (const name of plan.outputs) {
      const held = values.get(name)!;
      // A copy: an output may live in a pooled arena or be a view of an input or weight; the caller must own it.
      const value = await downloadOwned(plan.executors.get(held.executor)!, held.value);
      // defineProperty: an output named "__proto__" is an own key like any other, not the object's prototype.
      Object.defineProperty(result, name, { value, enumerable: true, writable: true, configurable: true });
    }
    return result;
  }

  /**
   * Runs `step` on the validator on the same inputs and compares: a disagreement (or the validator failing) is a
   * ValidationError in "error" mode, a "validation-mismatch" event in "warn" mode. `inputs` were moved to the
   * validator before the step ran.
   */
  async #validate(runId: number, step: Plan["steps"][number], attrs: Readonly<Record<string, unknown>>, executor: Executor, value: unknown, outShape: Shape, inputs: { readonly value: unknown[] } | { readonly error: unknown }): Promise<void> {
    const { executor: validator, mode, tolerance } = this.#validation!;
    const base = { node: step.node, kind: step.kind, executor: executor.name, validator: validator.name };
    let d: Disagreement | undefined;
    try {
      if ("error" in inputs) throw inputs.error;
      const args = inputs.value;
      const theirs = await validator.dispatch({ kind: step.kind, node: step.node, attrs, inputs: args, outShape });
      try {
        d = disagreement(base, await executor.download(value), await validator.download(theirs), tolerance);
      } finally {
        validator.release?.(theirs);
      }
    } catch (e) {
      d = { ...base, index: -1, got: NaN, expected: NaN, failures: 0, reason: `${validator.name} failed: ${e instanceof Error ? e.message : String(e)}` };
    }
    if (!d) return;
    if (mode === "error") throw new ValidationError(runId, d);
    if (this.#events.observed) this.#events.next({ type: "validation-mismatch", runId, ...d });
  }

  /** This run's overrides by node (the session's patches, then the run's), every name and value checked. */
  #overridesOf(runId: number, runOverrides: Readonly<Record<string, Override>> | undefined): Map<string, Override[]> {
    if (runOverrides !== undefined) {
      if (typeof runOverrides !== "object" || runOverrides === null) throw new GraphValidationError("run options.override", "invalid overrides", "an object of node name → tensor or function", String(runOverrides));
      for (const node of Object.keys(runOverrides)) {
        checkOverrideTarget(this.graph, node, `override ${node}`);
        checkOverride(runOverrides[node], node, runId);
      }
    }
    return this.#patches.snapshot(runOverrides);
  }

  async #checkFinite(runId: number, step: { node: string; kind: string }, executor: Executor, value: unknown, minusInfinityOk: boolean): Promise<void> {
    const data = (await executor.download(value)).toFloat32Array();
    for (let i = 0; i < data.length; i++) {
      const v = data[i]!;
      if (!Number.isFinite(v) && !(v === -Infinity && minusInfinityOk)) throw new NumericsError(runId, step.node, step.kind, i, v);
    }
  }

  /**
   * Copies a watched tensor onto each subscriber's queue (the copy must be made now: the value may live in an arena the
   * next step reuses). No subscriber code runs here; see TapPolicy for when the queues drain.
   */
  async #enqueue(runId: number, node: string, executor: Executor, value: unknown, subs: readonly Watcher[]): Promise<void> {
    const tensor = await downloadOwned(executor, value);
    subs.forEach((w, i) => {
      const lost = w.push({ runId, node, tensor: i === 0 ? tensor : tensor.clone() }, this.#tapPolicy);
      if (lost && this.#events.observed) this.#events.next({ type: "tap-dropped", runId: lost.runId, node: lost.node, dropped: w.dropped });
    });
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

/** A step's inputs on the validator. */
function inputsFor(names: readonly (string | undefined)[], on: (name: string) => Promise<unknown>): Promise<unknown[]> {
  return Promise.all(names.map((v) => (v === undefined ? undefined : on(v))));
}

/** `p`'s outcome once settled, kept as a value (a failure is reported when the comparison is made). */
async function settled<T>(p: Promise<T>): Promise<{ readonly value: T } | { readonly error: unknown }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

function shapesOf(inputs: ReadonlyMap<string, AnyTensor>): Record<string, Shape> {
  const out: Record<string, Shape> = Object.create(null) as Record<string, Shape>;
  for (const [name, t] of inputs) out[name] = t.shape;
  return out;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}
