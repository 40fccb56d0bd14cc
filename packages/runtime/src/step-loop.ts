// The step loop of one run: each step's inputs moved to its executor, its kernel dispatched (into its planned slot),
// validated against a second executor (validateWith), overridden (patches), checked for NaN and ±∞ (checkNumerics),
// timed on the event stream and copied to its taps; then the outputs copied out. The Session decides what a run is;
// this runs it.
import { yieldToEventLoop, type Executor, type OpRegistry } from "@attngraph/graph";
import type { Plan } from "@attngraph/scheduler";
import type { AnyTensor, Shape, Tensor } from "@attngraph/tensor";
import type { Subject } from "rxjs";
import { AbortError, NumericsError, RunError, SessionDisposedError } from "./errors.js";
import type { SessionEvent } from "./events.js";
import { downloadOwned } from "./download-owned.js";
import { applyOverrides } from "./overrides.js";
import type { Held, RunContext } from "./run-context.js";
import { runStop } from "./run-stop.js";
import type { TapPolicy, Watcher } from "./taps.js";
import { disagreement, ValidationError, type Disagreement, type Validation } from "./validate.js";

/** What the step loop reads of its session. */
export interface StepEnv {
  readonly events: Subject<SessionEvent>;
  readonly registry: OpRegistry;
  readonly checkNumerics: boolean;
  readonly validation: Validation | undefined;
  readonly tapPolicy: TapPolicy;
  /** Aborted by the session's dispose(). */
  readonly disposal: AbortSignal;
}

export async function runSteps(
  env: StepEnv,
  run: RunContext,
  values: Map<string, Held>,
  onExecutor: Map<string, Held>,
  setCurrent: (node: string | undefined) => void,
): Promise<Record<string, Tensor>> {
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
  const validator = env.validation?.executor;
  const forValidator = new Map<string, Promise<unknown>>();
  const onValidator = (name: string): Promise<unknown> => {
    let v = forValidator.get(name);
    if (!v) {
      const held = values.get(name);
      if (!held && !inputs.has(name)) return weights.on(name, validator!); // the weight store releases its uploads
      // A copy: a host executor's download may be a view of memory the step about to run overwrites (in place).
      v = (
        held
          ? Promise.resolve(plan.executors.get(held.executor)!.download(held.value))
          : Promise.resolve(inputs.get(name)!)
      ).then((t) => validator!.upload(t.clone()));
      forValidator.set(name, v);
    }
    return v;
  };
  if (!validator) return stepLoop(env, run, values, onExecutor, valueOn, setCurrent, undefined);
  try {
    return await stepLoop(env, run, values, onExecutor, valueOn, setCurrent, onValidator);
  } finally {
    await Promise.all(
      [...forValidator.values()].map((v) =>
        v.then(
          (value) => validator.release?.(value),
          () => undefined,
        ),
      ),
    );
  }
}

async function stepLoop(
  env: StepEnv,
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
  const events = env.events;
  const mayHide = new Set<string>(); // values where −∞ is by design (checkNumerics)
  for (const step of plan.steps) {
    setCurrent(step.node);
    // dispose() came while this run was in flight: stop here; #execute releases what the run holds.
    if (env.disposal.aborted) throw new SessionDisposedError(`run ${runId}`, step.node);
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
    const checked =
      onValidator && env.validation!.executor.supports(step.kind, step.attrs).ok
        ? await settled(inputsFor(step.inputs, onValidator))
        : undefined;
    // The clock is read only for a subscriber (node-end's ms); one that subscribes mid-step sees the next step's.
    const start = events.observed ? performance.now() : -1;
    if (start >= 0)
      events.next({
        type: "node-start",
        runId,
        node: step.node,
        kind: step.kind,
        executor: executor.name,
        time: start,
      });
    let value: unknown;
    try {
      // Always the same object shape (out and signal present, maybe undefined): kernels read one monomorphic call.
      const dispatched = executor.dispatch({
        kind: step.kind,
        node: step.node,
        attrs: attrsOf(step),
        inputs: args,
        outShape,
        out,
        signal,
      });
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
    if (checked) await validateStep(env, runId, step, attrsOf(step), executor, value, outShape, checked);
    const patches = overrides.get(step.node);
    if (patches) {
      // The computed value goes back with everything else the run holds; readers see the override's.
      onExecutor.set(`\u0001computed\u0000${step.node}`, { executor: executor.name, value });
      value = await applyOverrides(
        runId,
        step.node,
        outShape,
        executor,
        value,
        patches,
        runStop(runId, step.node, signal, env.disposal),
      );
    }
    values.set(step.node, { executor: executor.name, value });
    if (env.checkNumerics) {
      // −∞ belongs where an op hides entries (OpDef.hidesWithMinusInfinity) and in views and copies of such a value.
      // A step that replaces nodes (fused non-empty) returns none of their hidden entries (attention's output has no
      // −∞); a step a fusion adds beside them (attention-lse, −∞ for a row that sees no key) is its op's own.
      const def = step.fused?.length ? undefined : env.registry.get(step.kind, step.node);
      const source = step.inputs[0];
      if (def?.hidesWithMinusInfinity || (step.layout !== "compute" && source !== undefined && mayHide.has(source)))
        mayHide.add(step.node);
      // A view shows values its source step was checked for; everything else is read back and scanned.
      if (step.layout !== "view") await checkFinite(runId, step, executor, value, mayHide.has(step.node));
    }
    if (events.observed && start >= 0) {
      events.next({
        type: "node-end",
        runId,
        node: step.node,
        kind: step.kind,
        executor: executor.name,
        shape: outShape,
        ms: performance.now() - start,
      });
    }
    const subs = watched.get(step.node);
    if (subs) await enqueue(env, runId, step.node, executor, value, subs);
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
async function validateStep(
  env: StepEnv,
  runId: number,
  step: Plan["steps"][number],
  attrs: Readonly<Record<string, unknown>>,
  executor: Executor,
  value: unknown,
  outShape: Shape,
  inputs: { readonly value: unknown[] } | { readonly error: unknown },
): Promise<void> {
  const { executor: validator, mode, tolerance } = env.validation!;
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
    d = {
      ...base,
      index: -1,
      got: NaN,
      expected: NaN,
      failures: 0,
      reason: `${validator.name} failed: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  if (!d) return;
  if (mode === "error") throw new ValidationError(runId, d);
  if (env.events.observed) env.events.next({ type: "validation-mismatch", runId, ...d });
}

async function checkFinite(
  runId: number,
  step: { node: string; kind: string },
  executor: Executor,
  value: unknown,
  minusInfinityOk: boolean,
): Promise<void> {
  const data = (await executor.download(value)).toFloat32Array();
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (!Number.isFinite(v) && !(v === -Infinity && minusInfinityOk))
      throw new NumericsError(runId, step.node, step.kind, i, v);
  }
}

/**
 * Copies a watched tensor onto each subscriber's queue (the copy must be made now: the value may live in an arena the
 * next step reuses). No subscriber code runs here; see TapPolicy for when the queues drain.
 */
async function enqueue(
  env: StepEnv,
  runId: number,
  node: string,
  executor: Executor,
  value: unknown,
  subs: readonly Watcher[],
): Promise<void> {
  const tensor = await downloadOwned(executor, value);
  subs.forEach((w, i) => {
    const lost = w.push({ runId, node, tensor: i === 0 ? tensor : tensor.clone() }, env.tapPolicy);
    if (lost && env.events.observed)
      env.events.next({ type: "tap-dropped", runId: lost.runId, node: lost.node, dropped: w.dropped });
  });
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

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}
