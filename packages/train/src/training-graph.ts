// The graph of one training step: the model's forward nodes, grad()'s backward nodes, and the optimizer's update nodes,
// with the loss as the only output (the gradients and new parameters stay on the executor; tap them to watch them).
import { grad } from "@attngraph/autodiff";
import { GraphBuilder, GraphValidationError, type OpGraph, type SymShape } from "@attngraph/graph";
import type { Optimizer } from "./optimizer.js";

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
}

export function trainingGraph(graph: OpGraph, options: TrainingGraphOptions): TrainingGraph {
  const { loss, optimizer } = options;
  if (!graph.has(loss) || graph.roleOf(loss) !== "node") throw new GraphValidationError("train.loss", "the loss must be a node of the graph", "a node name", String(loss));
  const params = options.params ?? graph.weights.filter((w) => (w.dtype ?? "float32") === "float32").map((w) => w.name);
  for (const p of params) {
    if (!graph.weights.some((w) => w.name === p)) throw new GraphValidationError("train.params", "no weight of this name", "a weight of the graph", p);
  }
  const g = grad(graph, { loss, wrt: params });
  const b = GraphBuilder.from(g.graph); // outputs are not carried over: the loss is the only one
  b.input(optimizer.stepInput, [1]);
  const updates: Record<string, string> = {};
  const state: { name: string; shape: SymShape }[] = [];
  // A parameter the loss does not reach has no gradient: the optimizer leaves it alone (PyTorch skips a parameter whose
  // .grad is None), so weight decay does not shrink it either. grad() notes it.
  const unreached = new Set(g.unreached);
  for (const p of params) {
    if (unreached.has(p)) continue;
    const u = optimizer.addUpdate(b, p, g.grads[p]!);
    Object.assign(updates, u.updates);
    state.push(...u.state);
  }
  return { graph: b.output(loss).build(), updates, state, notes: g.notes, ...(g.seed ? { seed: g.seed } : {}) };
}
