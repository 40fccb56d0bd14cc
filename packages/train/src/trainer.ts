// A training loop's one step at a time: the session of the training graph, fed a batch and the step count, resolving
// to the loss. Parameters and optimizer state stay on the executor between steps (compile's `updates`); they come
// back to the host only when asked (`parameters()`), or through taps.
import type { Executor, OpGraph } from "@attngraph/graph";
import { compile, type Session, type SessionEvent } from "@attngraph/runtime";
import { GraphValidationError } from "@attngraph/graph";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import { type Observable, Subject, merge } from "rxjs";
import type { Optimizer } from "./optimizer.js";
import type { ParamGroup } from "./param-groups.js";
import type { LrSchedule } from "./schedule.js";
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
  /**
   * Per-group hyperparameters, torch.optim's param_groups: `[{ params: names | (name, shape) => boolean, weightDecay,
   * lr, … }]`, every trained parameter in exactly one group (`nanoGPTGroups(0.1)`: decay on rank >= 2 only).
   */
  readonly paramGroups?: readonly ParamGroup[];
  /** torch.nn.utils.clip_grad_norm_(params, clipGradNorm) before each update, on the executor; steps report `gradNorm`. */
  readonly clipGradNorm?: number;
  /**
   * The learning rate of each step from its iteration (0 first, nanoGPT's iter_num), e.g. `cosineSchedule(…)`. A group
   * with its own lr follows it in proportion (its lr · schedule(i) / the optimizer's lr), as torch's LambdaLR does.
   */
  readonly schedule?: LrSchedule;
  /**
   * Gradient accumulation over n microbatches (nanoGPT's gradient_accumulation_steps): `step([b1, …, bn])` sums their
   * gradients (each scaled by 1 / n) on the executor and makes one update, clipped and scheduled once. Default 1.
   */
  readonly accumulate?: number;
}

/** A model graph's inputs for one run, by name (tokens, targets, …). */
export type Batch = Readonly<Record<string, AnyTensor>>;

/** One event per finished step on `trainer.events$`. */
export interface StepEvent {
  readonly type: "step";
  /** 1 for the first step. */
  readonly step: number;
  /** The loss of this step's batch, computed before its update. */
  readonly loss: number;
  /** With `clipGradNorm`: the total gradient norm before clipping (what clip_grad_norm_ returns, nanoGPT's logged norm). */
  readonly gradNorm?: number;
  /** With a `schedule`: this step's learning rate. */
  readonly lr?: number;
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
  readonly #schedule: { readonly lr: number; readonly at: LrSchedule } | undefined;
  #steps = 0;
  /** Settles when the step before has: steps take turns, each numbered after the one before it finished. */
  #inTurn: Promise<unknown> = Promise.resolve();

  private constructor(
    session: Session,
    training: TrainingGraph,
    params: readonly string[],
    optimizer: Optimizer,
    schedule: LrSchedule | undefined,
  ) {
    this.session = session;
    this.training = training;
    this.#params = params;
    this.#stepInput = optimizer.stepInput;
    this.#schedule = schedule ? { lr: optimizer.lr, at: schedule } : undefined;
    this.events$ = merge(this.steps$, session.events$);
  }

  /** Builds the training graph of `graph` and compiles it. */
  static async create(graph: OpGraph, options: TrainerOptions): Promise<Trainer> {
    if (options.schedule !== undefined && typeof options.schedule !== "function") {
      throw new GraphValidationError(
        "train.schedule",
        "invalid learning-rate schedule",
        "a function of the iteration to the rate",
        String(options.schedule),
      );
    }
    const params =
      options.params ?? graph.weights.filter((w) => (w.dtype ?? "float32") === "float32").map((w) => w.name);
    const training = trainingGraph(graph, {
      loss: options.loss,
      params,
      optimizer: options.optimizer,
      ...(options.paramGroups ? { paramGroups: options.paramGroups } : {}),
      ...(options.clipGradNorm !== undefined ? { clipGradNorm: options.clipGradNorm } : {}),
      ...(options.schedule ? { schedule: true } : {}),
      ...(options.accumulate !== undefined ? { accumulate: options.accumulate } : {}),
    });
    const zeros = Object.fromEntries(training.state.map((s) => [s.name, Tensor.zeros(s.shape as number[])]));
    const session = await compile(training.graph, {
      executors: options.executors,
      ...(options.placement ? { placement: options.placement } : {}),
      weights: { ...options.weights, ...zeros },
      updates: training.updates,
      ...(options.fusion === false ? { fusion: false } : {}),
    });
    return new Trainer(session, training, params, options.optimizer, options.schedule);
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.#steps;
  }

  /**
   * One step on `batch` (the model graph's inputs, e.g. tokens and targets, and `<loss>.grad` for a non-scalar loss):
   * forward, backward and the optimizer's update, as one run. Resolves to the loss before the update (for a non-scalar
   * loss, sum(loss ⊙ <loss>.grad)). A step that fails or is aborted changes no parameter.
   *
   * With `accumulate: n`, `batch` is a list of n microbatches, one run each (nanoGPT's micro steps: each gradient
   * scaled by 1 / n and summed on the executor), then one update; it resolves to the mean of their losses. A micro step
   * that fails or is aborted leaves the parameters and optimizer state as they were (the sum restarts next step).
   */
  step(batch: Batch | readonly Batch[], options: { readonly signal?: AbortSignal } = {}): Promise<number> {
    const next = this.#inTurn.then(() => this.#step(batch, options));
    this.#inTurn = next.catch(() => undefined);
    return next;
  }

  async #step(batch: Batch | readonly Batch[], options: { readonly signal?: AbortSignal }): Promise<number> {
    const t0 = performance.now();
    const t = this.#steps + 1;
    const micro = this.#microbatches(batch);
    const n = micro.length;
    const lr = this.#schedule ? this.#lrAt(t - 1) : undefined;
    const common: Record<string, AnyTensor> = { [this.#stepInput]: Tensor.from([t], [1]) };
    // The factor, not the rate, goes in: each group's adam-step multiplies its own lr by it.
    if (lr !== undefined) common[this.training.lrScale!] = Tensor.from([lr / this.#schedule!.lr], [1]);
    const lossName = this.training.graph.outputs[0]!;
    const acc = this.training.accumulate;
    let lossSum = 0;
    let sumSq: number | undefined;
    for (let k = 1; k <= n; k++) {
      const b = micro[k - 1]!;
      // An aborted signal rejects before the first node (AbortError), so an aborted step changes nothing.
      // Dropout draws each run's own masks, numbered from the step (dropout step (t − 1) · n + k − 1: the first run
      // draws the seeds' own) whatever other runs the session made: the same elements on every executor, and a failed
      // step's retry the same again.
      // Micro steps before the last update only the accumulators: their runs plan no optimizer node.
      const runOptions = {
        dropoutStep: (t - 1) * n + k - 1,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(acc && k < n ? { updates: acc.accumulators } : {}),
      };
      const fed: Record<string, AnyTensor> = {
        ...b,
        ...common,
        ...(acc ? { [acc.micro]: Tensor.from([k], [1]) } : {}),
      };
      const out = await this.session.run(fed, runOptions);
      lossSum += this.training.seed ? dot(out[lossName]!, b[this.training.seed]) : out[lossName]!.toArray()[0]!;
      // One float read back: the norm clip_grad_norm_ returns (before clipping), as nanoGPT logs it.
      if (k === n && this.training.gradSumSquares) sumSq = out[this.training.gradSumSquares]!.toArray()[0]!;
    }
    const loss = lossSum / n;
    this.#steps = t;
    this.#events.next({
      type: "step",
      step: t,
      loss,
      ...(sumSq !== undefined ? { gradNorm: Math.sqrt(sumSq) } : {}),
      ...(lr !== undefined ? { lr } : {}),
      ms: performance.now() - t0,
    });
    return loss;
  }

  /** The step's microbatches: one batch, or with `accumulate: n` a list of exactly n (else an error naming the field). */
  #microbatches(batch: Batch | readonly Batch[]): readonly Batch[] {
    const n = this.training.accumulate?.n ?? 1;
    if (n === 1) {
      if (Array.isArray(batch))
        throw new GraphValidationError(
          "train.step.batch",
          "a list of microbatches needs accumulate",
          "one batch (or createTrainer({ accumulate: n }))",
          `a list of ${batch.length}`,
        );
      return [batch as Batch];
    }
    if (!Array.isArray(batch) || batch.length !== n) {
      throw new GraphValidationError(
        "train.step.batch",
        "with accumulate, a step takes one batch per micro step",
        `a list of ${n} batches`,
        Array.isArray(batch) ? `a list of ${batch.length}` : "one batch",
      );
    }
    return batch;
  }

  /** The schedule's rate at `iteration`, checked: a NaN or negative rate must not reach the parameters. */
  #lrAt(iteration: number): number {
    const lr = this.#schedule!.at(iteration);
    if (typeof lr !== "number" || !Number.isFinite(lr) || lr < 0)
      throw new GraphValidationError(
        "train.schedule",
        `invalid learning rate at iteration ${iteration}`,
        "a finite number >= 0",
        String(lr),
      );
    return lr;
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
  if (typeof options !== "object" || options === null)
    throw new AttnGraphError("validation", "createTrainer: missing options", { subject: "createTrainer" });
  return Trainer.create(graph, options);
}
