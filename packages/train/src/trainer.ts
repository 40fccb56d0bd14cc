// A training loop's one step at a time: the session of the training graph, fed a batch and the step count, resolving
// to the loss. Parameters and optimizer state stay on the executor between steps (compile's `updates`); they come
// back to the host only when asked (`parameters()`), or through taps.
import type { Executor, OpGraph } from "@attngraph/graph";
import { compile, type Session, type SessionEvent } from "@attngraph/runtime";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import { Observable, Subject, merge } from "rxjs";
import type { Optimizer } from "./optimizer.js";
import { trainingGraph, type TrainingGraph } from "./training-graph.js";

export interface TrainerOptions {
  readonly loss: string;
  readonly optimizer: Optimizer;
  /** The weights to train; default every float32 weight. */
  readonly params?: readonly string[];
  readonly executors: readonly Executor[];
  /** Node name → executor name (see compile). */
  readonly placement?: Readonly<Record<string, string>>;
  /** The initial value of every weight of the model graph (optimizer state starts at 0 by itself). */
  readonly weights: Readonly<Record<string, AnyTensor>>;
  /** Fusion of the training graph (default on: the attention chains run with the fused attention backward). */
  readonly fusion?: boolean;
}

/** One event per finished step on `trainer.events$`. */
export interface StepEvent {
  readonly type: "step";
  /** 1 for the first step. */
  readonly step: number;
  /** The loss of this step's batch, computed before its update. */
  readonly loss: number;
  readonly ms: number;
}

export class Trainer {
  /** The session of the training graph: tap any node of it (`"transformer.attention.weights"`, `"output.weight.grad"`). */
  readonly session: Session;
  readonly training: TrainingGraph;
  readonly #events = new Subject<StepEvent>();
  /** One `step` event per finished step, interleaved with the session's own events (runs, nodes, errors). */
  readonly events$: Observable<StepEvent | SessionEvent>;
  /** Only the step events. */
  readonly steps$: Observable<StepEvent> = this.#events.asObservable();
  readonly #params: readonly string[];
  readonly #stepInput: string;
  #steps = 0;
  /** Settles when the step before has: steps take turns, each numbered after the one before it finished. */
  #inTurn: Promise<unknown> = Promise.resolve();

  private constructor(session: Session, training: TrainingGraph, params: readonly string[], stepInput: string) {
    this.session = session;
    this.training = training;
    this.#params = params;
    this.#stepInput = stepInput;
    this.events$ = merge(this.steps$, session.events$);
  }

  /** Builds the training graph of `graph` and compiles it. */
  static async create(graph: OpGraph, options: TrainerOptions): Promise<Trainer> {
    const params = options.params ?? graph.weights.filter((w) => (w.dtype ?? "float32") === "float32").map((w) => w.name);
    const training = trainingGraph(graph, { loss: options.loss, params, optimizer: options.optimizer });
    const zeros = Object.fromEntries(training.state.map((s) => [s.name, Tensor.zeros(s.shape as number[])]));
    const session = await compile(training.graph, {
      executors: options.executors,
      ...(options.placement ? { placement: options.placement } : {}),
      weights: { ...options.weights, ...zeros },
      updates: training.updates,
      ...(options.fusion === false ? { fusion: false } : {}),
    });
    return new Trainer(session, training, params, options.optimizer.stepInput);
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.#steps;
  }

  /**
   * One step on `batch` (the model graph's inputs, e.g. tokens and targets, and `<loss>.grad` for a non-scalar loss):
   * forward, backward and the optimizer's update, as one run. Resolves to the loss before the update (for a non-scalar
   * loss, sum(loss ⊙ <loss>.grad)). A step that fails or is aborted changes no parameter.
   */
  step(batch: Readonly<Record<string, AnyTensor>>, options: { readonly signal?: AbortSignal } = {}): Promise<number> {
    const next = this.#inTurn.then(() => this.#step(batch, options));
    this.#inTurn = next.catch(() => undefined);
    return next;
  }

  async #step(batch: Readonly<Record<string, AnyTensor>>, options: { readonly signal?: AbortSignal }): Promise<number> {
    const t0 = performance.now();
    const t = this.#steps + 1;
    // An aborted signal rejects before the first node (AbortError), so an aborted step changes nothing.
    // Dropout draws step t's masks (dropout step t − 1: the first step draws the seeds' own), whatever other runs the
    // session made, so step t drops the same elements on every executor, and a failed step's retry the same again.
    const runOptions = { dropoutStep: t - 1, ...(options.signal ? { signal: options.signal } : {}) };
    const out = await this.session.run({ ...batch, [this.#stepInput]: Tensor.from([t], [1]) }, runOptions);
    const lossName = this.training.graph.outputs[0]!;
    const loss = this.training.seed ? dot(out[lossName]!, batch[this.training.seed]) : out[lossName]!.toArray()[0]!;
    this.#steps = t;
    this.#events.next({ type: "step", step: t, loss, ms: performance.now() - t0 });
    return loss;
  }

  /** The trained parameters now (host copies, by the model's weight names), read back from their executors. */
  async parameters(): Promise<Map<string, AnyTensor>> {
    const all = await this.session.readWeights();
    return new Map(this.#params.map((p) => [p, all.get(p)!]));
  }

  /** The training step's plan (see Session.explain), with what grad() noted (a parameter the loss does not reach). */
  explain(options: Parameters<Session["explain"]>[0] = {}): string {
    const notes = this.training.notes.map((n) => `grad: ${n}`);
    return [this.session.explain(options), ...notes].join("\n");
  }

  async dispose(): Promise<void> {
    this.#events.complete();
    await this.session.dispose();
  }
}

/** L = sum(loss ⊙ seed) of a non-scalar loss, on the host (the seed came from there). */
function dot(loss: Tensor, seed: AnyTensor | undefined): number {
  const a = loss.toFloat32Array();
  const b = seed!.toFloat32Array();
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** `Trainer.create`: a trainer for `graph`'s scalar `loss`. */
export function createTrainer(graph: OpGraph, options: TrainerOptions): Promise<Trainer> {
  if (typeof options !== "object" || options === null) throw new AttnGraphError("validation", "createTrainer: missing options", { subject: "createTrainer" });
  return Trainer.create(graph, options);
}
