// Attribution from gradients: each head's activation times the metric's gradient with respect to it (grad()), summed
// over the head's elements, in one forward and backward run instead of one run per head. With a corrupted input it is
// attribution patching: (clean − corrupted activation) · gradient at the corrupted run, the first-order estimate of
// what patchFrom measures by patching that head's clean value into the corrupted run (exact where the metric is linear
// in the node, as the output is in the per-head context).
import { grad } from "@attngraph/autodiff";
import { GraphValidationError, type Executor, type OpGraph } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import type { AnyTensor, Tensor } from "@attngraph/tensor";
import { runWithCache } from "./cache.js";
import { requireHeadsAxis } from "./heads-axis.js";
import { checkHeads, checkRunShapes, forHead } from "./heads.js";

export interface AttributionOptions {
  readonly executors: readonly Executor[];
  readonly weights?: Readonly<Record<string, AnyTensor>>;
  /** The (clean) run's inputs. */
  readonly inputs: Readonly<Record<string, AnyTensor>>;
  /** Per-head nodes ([B, H, ...]: `context.heads`, `weights`, `q.heads`, …) to attribute. */
  readonly nodes: readonly string[];
  /**
   * The node the metric is read from. A scalar node (a mean loss) is the metric; any other node needs `seed`, and the
   * metric is sum(node ⊙ seed) (a logit difference: +1 and −1 at two places of the output).
   */
  readonly metric: string;
  readonly seed?: Tensor;
  /** A corrupted input: attribution patching (see the file's note) instead of activation × gradient at the clean run. */
  readonly corrupted?: Readonly<Record<string, AnyTensor>>;
}

export interface HeadAttribution {
  readonly node: string;
  /** Per head, summed over the batch. */
  readonly perHead: readonly number[];
  /** [b][h]: per batch entry and head. */
  readonly perBatch: readonly (readonly number[])[];
}

export interface AttributionResult {
  /** The metric at the run the gradient was taken at (the corrupted run with `corrupted`, else the clean one). */
  readonly metric: number;
  readonly nodes: readonly HeadAttribution[];
}

export async function attributeHeads(graph: OpGraph, options: AttributionOptions): Promise<AttributionResult> {
  if (!Array.isArray(options.nodes) || options.nodes.length === 0)
    throw new GraphValidationError(
      "attributeHeads.nodes",
      "nothing to attribute",
      "a non-empty list of per-head nodes",
      String(options.nodes),
    );
  for (const n of options.nodes) {
    if (!graph.has(n) || graph.roleOf(n) !== "node")
      throw new GraphValidationError(`attributeHeads.nodes ${n}`, "no node of this name", "a node of the graph", n);
  }
  const axes = options.nodes.map((n) => requireHeadsAxis(graph, n, `attributeHeads.nodes ${n}`));
  const g = grad(graph, { loss: options.metric, wrt: options.nodes });
  if (g.seed && !options.seed) {
    throw new GraphValidationError(
      `attributeHeads.metric ${options.metric}`,
      "the metric node is not a scalar: give `seed` (the metric is then sum(node ⊙ seed))",
      "seed of the node's shape",
      "no seed",
    );
  }
  if (!g.seed && options.seed)
    throw new GraphValidationError(
      `attributeHeads.seed`,
      "the metric node is a scalar: it is the metric itself, with no seed",
      "no seed",
      "a seed",
    );
  const withSeed = (inputs: Readonly<Record<string, AnyTensor>>) =>
    g.seed ? { ...inputs, [g.seed]: options.seed! } : inputs;
  const session = await compile(g.graph, {
    executors: [...options.executors],
    ...(options.weights ? { weights: options.weights } : {}),
  });
  try {
    const gradNames = options.nodes.map((n) => g.grads[n]!);
    // Both runs draw the same dropout masks (step 0): in training mode they differ by their inputs alone.
    const at = await runWithCache(
      session,
      withSeed(options.corrupted ?? options.inputs),
      [...options.nodes, ...gradNames, options.metric],
      { dropoutStep: 0 },
    );
    const clean = options.corrupted
      ? (await runWithCache(session, withSeed(options.inputs), options.nodes, { dropoutStep: 0 })).cache
      : undefined;
    const metricValue = at.cache.get(options.metric)!;
    const metric = options.seed ? dot(metricValue, options.seed) : metricValue.toFloat32Array()[0]!;
    const nodes = options.nodes.map((node, i): HeadAttribution => {
      const here = at.cache.get(node)!;
      const gradient = at.cache.get(gradNames[i]!)!;
      const axis = axes[i]!;
      checkHeads(node, here, [], axis);
      // Attribution patching weighs the change the patch would make; plain attribution the activation itself.
      const delta = clean ? difference(node, clean.get(node)!, here) : here.toFloat32Array();
      const gd = gradient.toFloat32Array();
      const nb = here.shape[0]!;
      const nh = here.shape[axis]!;
      const perBatch = Array.from({ length: nb }, () => new Array<number>(nh).fill(0));
      for (let h = 0; h < nh; h++) {
        forHead(here, axis, h, (start, end, b) => {
          let s = 0;
          for (let k = start; k < end; k++) s += delta[k]! * gd[k]!;
          perBatch[b]![h]! += s;
        });
      }
      return {
        node,
        perHead: Array.from({ length: nh }, (_, h) => perBatch.reduce((s, row) => s + row[h]!, 0)),
        perBatch,
      };
    });
    return { metric, nodes };
  } finally {
    await session.dispose();
  }
}

function dot(a: Tensor, b: Tensor): number {
  const x = a.toFloat32Array();
  const y = b.toFloat32Array();
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  return s;
}

/** a − b in float64: the clean and the corrupted run's values of `node`. */
function difference(node: string, a: Tensor, b: Tensor): Float64Array {
  checkRunShapes(node, a, b);
  const x = a.toFloat32Array();
  const y = b.toFloat32Array();
  return Float64Array.from(x, (v, i) => v - y[i]!);
}
