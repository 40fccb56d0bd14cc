// The graph of one training step: the model's forward nodes, grad()'s backward nodes, and the optimizer's update nodes,
// with the loss as the only output (the gradients and new parameters stay on the executor; tap them to watch them).
import { grad } from "@attngraph/autodiff";
import { GraphBuilder, GraphValidationError, type OpGraph, type SymShape } from "@attngraph/graph";
import { addGradAccumulation, checkAccumulate } from "./grad-accumulation.js";
import { addGradClipping } from "./grad-clip.js";
import type { Optimizer } from "./optimizer.js";
import { groupOptimizers, type ParamGroup } from "./param-groups.js";

/** The one-element input a schedule's factor on the learning rate comes in by (adam-step's lrScale). */
export const LR_SCALE_INPUT = "train.lrScale";

export interface TrainingGraph {
  readonly graph: OpGraph;
  /** The upstream-gradient input of a non-scalar loss (`<loss>.grad`, fed with each batch); absent for a scalar loss. */
  readonly seed?: string;
  /** Weight → the node that replaces it after each step (compile's `updates`). */
  readonly updates: Readonly<Record<string, string>>;
  /** The optimizer's state weights (zeros at the start). */
  readonly state: readonly { readonly name: string; readonly shape: SymShape }[];
  /** Notes for explain(), from grad(). */
  readonly notes: readonly string[];
  /** With clipping: the [1] node of Σ every gradient's squares, the graph's second output (the norm is its root). */
  readonly gradSumSquares?: string;
  /** With a schedule: the one-element input of the step's factor on the learning rate. */
  readonly lrScale?: string;
  /** With accumulation: the micro step's input and the accumulators (`<p>.grad.acc`, weights updated every micro step). */
  readonly accumulate?: { readonly n: number; readonly micro: string; readonly accumulators: readonly string[] };
}

export interface TrainingGraphOptions {
  /**
   * The node to minimise: a scalar (the mean cross-entropy `loss` of `simpleTransformer(config, { loss: true })`), or
   * any node, whose upstream gradient then comes with each batch as input `<loss>.grad` (L = sum(loss ⊙ <loss>.grad)).
   */
  readonly loss: string;
  /** The weights to train; default every float32 weight of the graph. */
  readonly params?: readonly string[];
  readonly optimizer: Optimizer;
  /** Per-group hyperparameters (torch.optim's param_groups); every parameter in exactly one group. */
  readonly paramGroups?: readonly ParamGroup[];
  /** clip_grad_norm_(params, clipGradNorm) before each update, on the executor. */
  readonly clipGradNorm?: number;
  /** Adds the `train.lrScale` input that a learning-rate schedule feeds each step. */
  readonly schedule?: boolean;
  /**
   * Gradient accumulation over n microbatches (nanoGPT's gradient_accumulation_steps, grad-accumulation.ts): fed
   * `train.micro` = k for the k-th microbatch; only the last one's update of the parameters counts.
   */
  readonly accumulate?: number;
}

export function trainingGraph(graph: OpGraph, options: TrainingGraphOptions): TrainingGraph {
  const { loss, optimizer } = options;
  if (!graph.has(loss) || graph.roleOf(loss) !== "node")
    throw new GraphValidationError("train.loss", "the loss must be a node of the graph", "a node name", String(loss));
  const params = options.params ?? graph.weights.filter((w) => (w.dtype ?? "float32") === "float32").map((w) => w.name);
  for (const p of params) {
    if (!graph.weights.some((w) => w.name === p))
      throw new GraphValidationError("train.params", "no weight of this name", "a weight of the graph", p);
  }
  const optimizers = groupOptimizers(graph, params, optimizer, options.paramGroups);
  const n = checkAccumulate(options.accumulate ?? 1);
  const g = grad(graph, { loss, wrt: params });
  const b = GraphBuilder.from(g.graph); // outputs are not carried over: the loss is the only one (and the norm's square)
  b.input(optimizer.stepInput, [1]);
  const lrScale = options.schedule ? b.input(LR_SCALE_INPUT, [1]) : undefined;
  const updates: Record<string, string> = {};
  const state: { name: string; shape: SymShape }[] = [];
  // A parameter the loss does not reach has no gradient: the optimizer leaves it alone (PyTorch skips a parameter whose
  // .grad is None), so weight decay does not shrink it either. grad() notes it.
  // So does clipping: torch's clip_grad_norm_ only counts parameters whose .grad is not None.
  const unreached = new Set(g.unreached);
  const reached: Record<string, string> = Object.fromEntries(
    params.filter((p) => !unreached.has(p)).map((p) => [p, g.grads[p]!]),
  );
  const acc = n > 1 ? addGradAccumulation(b, reached, n) : undefined;
  if (acc) {
    Object.assign(updates, acc.updates);
    state.push(...acc.state);
  }
  const grads = acc ? acc.grads : reached;
  const clip = options.clipGradNorm === undefined ? undefined : addGradClipping(b, grads, options.clipGradNorm);
  for (const p of Object.keys(grads)) {
    const u = optimizers.get(p)!.addUpdate(b, p, clip ? clip.grads[p]! : grads[p]!, lrScale ? { lrScale } : {});
    Object.assign(updates, u.updates);
    state.push(...u.state);
  }
  b.output(loss);
  if (clip) b.output(clip.sumSquares);
  return {
    graph: b.build(),
    updates,
    state,
    notes: g.notes,
    ...(g.seed ? { seed: g.seed } : {}),
    ...(clip ? { gradSumSquares: clip.sumSquares } : {}),
    ...(lrScale ? { lrScale } : {}),
    ...(acc ? { accumulate: { n, micro: acc.micro, accumulators: Object.keys(acc.updates) } } : {}),
  };
}
