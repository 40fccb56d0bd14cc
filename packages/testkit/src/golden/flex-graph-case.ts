// A golden-flex case as a graph case: the attention core of its variant (flexAttention: score → score-mod → mask-mod →
// softmax → weighted-sum, the expressions as the case writes them), its inputs, the expected output and weights, and
// the gradients of q, k, v and every learnable gathered input, with the case's gradOutput as the seed.
import { flexAttention } from "@attngraph/attention";
import type { FlexCase } from "./flex-case.js";
import type { GraphCase } from "./graph-case.js";

export function flexGraphCase(c: FlexCase): GraphCase {
  const [q, v] = [c.inputs["q"]!, c.inputs["v"]!];
  const gathered = Object.fromEntries(
    Object.entries(c.inputs)
      .filter(([n]) => n !== "q" && n !== "k" && n !== "v")
      .map(([n, t]) => [n, [...t.shape]]),
  );
  const graph = flexAttention({
    numHeads: c.numHeads,
    numKvHeads: c.numKvHeads,
    headDim: q.shape[3]!,
    valueDim: v.shape[3]!,
    scale: c.scale,
    scoreMod: c.scoreMod,
    maskMod: c.maskMod,
    gathered,
  });
  const expected = Object.entries(c.expected).map(([name, tensor]) => ({
    name,
    node: name === "output" ? graph.outputs[0]! : name,
    tensor,
  }));
  const grads = Object.entries(c.expectedGrad).map(([name, tensor]) => ({ name: `${name}.grad`, wrt: name, tensor }));
  return {
    file: c.file,
    name: c.name,
    graph,
    weights: () => ({}),
    inputs: c.inputs,
    expected,
    tolerance: c.tolerance,
    ...(grads.length && c.gradOutput
      ? { gradients: { loss: graph.outputs[0]!, seed: c.gradOutput, expected: grads } }
      : {}),
  };
}
