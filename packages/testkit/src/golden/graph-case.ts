// A golden attention case as a graph case: the graph a user builds from the case's config, its weights and inputs,
// and each expected tensor with the node that produces it. One mapping for every runner of the cases: the CLI's
// conformance runner compiles it on executors, @attngraph/onnx's tests export it and run it in onnxruntime.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import type { OpGraph } from "@attngraph/graph";
import type { AnyTensor, Tensor, Tolerance } from "@attngraph/tensor";
import type { GoldenCase } from "./case.js";
import type { TrainCase } from "./train-case.js";

/** What every kind of case comes down to: a graph, its weights and inputs, and tensors expected of named nodes. */
export interface GraphCase {
  readonly file: string;
  readonly name: string;
  readonly graph: OpGraph;
  /** Called only once something will be compared (a case that compares nothing compiles nothing). */
  readonly weights: () => Readonly<Record<string, AnyTensor>>;
  readonly inputs: Readonly<Record<string, AnyTensor>>;
  /** Each expected tensor with the node that produces it. */
  readonly expected: readonly { readonly name: string; readonly node: string; readonly tensor: Tensor }[];
  readonly tolerance: Tolerance;
  /** Parts of the case this runner cannot check at all (training steps), named on the case's line. */
  readonly notChecked?: readonly string[];
  /**
   * Gradients to check: the graph is differentiated (`grad()`) at `loss` with respect to each `wrt`, on the same run as
   * the forward tensors. `seed` is the upstream gradient (`<loss>.grad`) of a non-scalar loss; a scalar loss has none.
   */
  readonly gradients?: {
    readonly loss: string;
    readonly seed?: Tensor;
    readonly expected: readonly { readonly name: string; readonly wrt: string; readonly tensor: Tensor }[];
  };
}

/**
 * A golden-train case's expected tensors that its forward pass produces, by kind: expected name → the node of the
 * worked example's graph (nn builders) that produces it. Others (training results) are not forward values.
 */
export const TRAIN_FORWARD_NODES: Readonly<Record<TrainCase["kind"], Readonly<Record<string, string>>>> = {
  // The block's nodes carry the example's names; its attention weights are `attention.weights`.
  block: {
    ln1: "ln1",
    attention: "attention",
    weights: "attention.weights",
    residual: "residual",
    ln2: "ln2",
    "mlp.hidden": "mlp.hidden",
    "mlp.gelu": "mlp.gelu",
    mlp: "mlp",
    output: "output",
  },
  "mha-backward": { output: "output", weights: "weights" },
  // The logits at step 0 are the forward pass on the first batchSize samples with the initial parameters.
  train: { logits: "output" },
};

/** Maps an expected tensor's name to the node that produces it: `output` is the graph's output (context without out_proj). */
function nodeFor(name: string, outputs: readonly string[]): string {
  return name === "output" ? outputs[0]! : name;
}

/** An attention case as a graph case: the attention graph of its config, its weights and inputs, expected tensors and gradients. */
export function attentionGraphCase(c: GoldenCase, fusedQkv: boolean): GraphCase {
  const graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs, fusedQkv });
  const expected = Object.entries(c.expected).map(([name, tensor]) => ({
    name,
    node: nodeFor(name, graph.outputs),
    tensor,
  }));
  const { gradients, notChecked } = attentionGradients(c, graph, fusedQkv);
  return {
    file: c.file,
    name: c.name,
    graph,
    weights: () => attentionWeights(c.config, c.weights, { fusedQkv }),
    inputs: c.inputs,
    expected,
    tolerance: c.tolerance,
    notChecked,
    ...(gradients ? { gradients } : {}),
  };
}

/**
 * The gradients a golden-grad case expects, by the graph's value names: `x`, `kv` and the weights, which with
 * `fusedQkv` are the stacked W_qkv (W_kv with cross-attention) whose gradient is the stacked gradients. A gradient the
 * graph has no value for (a stacked weight with a part missing from the case) is named as not checked.
 */
function attentionGradients(
  c: GoldenCase,
  graph: OpGraph,
  fusedQkv: boolean,
): { gradients?: GraphCase["gradients"]; notChecked: string[] } {
  const names = Object.keys(c.expectedGrad);
  const seed = c.gradOutput;
  if (names.length === 0 || !seed) return { notChecked: gradientsNotChecked(names) };
  const byValue: Record<string, Tensor> = {};
  const notChecked: string[] = [];
  for (const n of ["x", "kv"]) if (c.expectedGrad[n] && graph.has(n)) byValue[n] = c.expectedGrad[n]!;
  const weightGrads = Object.fromEntries(Object.entries(c.expectedGrad).filter(([n]) => n !== "x" && n !== "kv"));
  try {
    // The stacked forms (W_qkv, W_kv, b_*) of the fused graph, or the same names as given.
    for (const [n, t] of Object.entries(attentionWeights(c.config, weightGrads, { fusedQkv })))
      if (graph.has(n)) byValue[n] = t;
  } catch {
    // A stacked weight needs every part; without one, compare the gradients that map one to one.
    for (const [n, t] of Object.entries(weightGrads)) if (graph.has(n)) byValue[n] = t;
  }
  // Every expected gradient is compared, directly or as part of a stacked one, or named: never dropped silently.
  const stacked: Readonly<Record<string, readonly string[]>> = fusedQkv ? STACKED_PARTS : {};
  for (const n of Object.keys(c.expectedGrad)) {
    if (!byValue[n] && !(stacked[n] ?? []).some((p) => byValue[p]))
      notChecked.push(`expectedGrad.${n} (no value of this name in the graph)`);
  }
  const expected = Object.entries(byValue).map(([wrt, tensor]) => ({ name: `grad ${wrt}`, wrt, tensor }));
  return { gradients: { loss: graph.outputs[0]!, seed, expected }, notChecked };
}

/** With a fused QKV projection, the stacked weight each separate weight's gradient is compared as part of. */
const STACKED_PARTS: Readonly<Record<string, readonly string[]>> = {
  W_query: ["W_qkv"],
  W_key: ["W_qkv", "W_kv"],
  W_value: ["W_qkv", "W_kv"],
  b_query: ["b_qkv"],
  b_key: ["b_qkv", "b_kv"],
  b_value: ["b_qkv", "b_kv"],
};

/**
 * A case's expected gradients as one not-checked entry (a block case has one per parameter, which would fill the line):
 * `expectedGrad (11 gradients: x, ln1.weight, ln1.bias, …)`; none for a forward-only case.
 */
export function gradientsNotChecked(names: readonly string[]): string[] {
  if (names.length === 0) return [];
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")}, …` : names.join(", ");
  return [`expectedGrad (${names.length} gradient${names.length === 1 ? "" : "s"}: ${shown})`];
}
