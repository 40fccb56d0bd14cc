import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { loadAnyCase } from "@attngraph/testkit";
import { clip, type AnyTensor, type Tensor } from "@attngraph/tensor";
import type { OpGraph } from "@attngraph/graph";
import { buildTrainCase } from "../conformance/run-train-case.js";
import { executorsFor } from "../executors.js";
import { UsageError, type IO } from "../io.js";

export const runHelp = `attngraph run <case.json> [--executor cpu] [--tap <node>]... [--tap all] [--fused-qkv] [--explain]
  Runs one golden case (an attention case, or a golden-train case: block, mha-backward, train — its forward pass) and
  prints the tapped tensors (default: the outputs) in PyTorch's format.`;

export async function run(args: { positionals: string[]; executor: string; tap: string[]; fusedQkv: boolean; explain: boolean }, io: IO): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new UsageError(`missing <case.json>\n${runHelp}`);
  const loaded = loadAnyCase(file);
  let graph: OpGraph;
  let weights: Readonly<Record<string, AnyTensor>>;
  let inputs: Readonly<Record<string, AnyTensor>>;
  if (loaded.format === "train") {
    ({ graph, weights, inputs } = buildTrainCase(loaded.case));
  } else {
    const c = loaded.case;
    graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs, fusedQkv: args.fusedQkv });
    weights = attentionWeights(c.config, c.weights, { fusedQkv: args.fusedQkv });
    inputs = c.inputs;
  }
  const session = await compile(graph, { executors: executorsFor(args.executor), weights });
  if (args.explain) io.out(`${session.explain()}\n`);
  const taps = args.tap.length ? args.tap : [...graph.outputs];
  const tapped: { node: string; tensor: Tensor }[] = [];
  const sub = session.tap(taps.includes("all") ? () => true : taps).subscribe((e) => tapped.push(e));
  try {
    await session.run(inputs);
  } finally {
    sub.unsubscribe();
    await session.dispose();
  }
  io.out(`${clip(loaded.case.name)} on ${clip(args.executor)}`);
  for (const { node, tensor } of tapped) io.out(`\n${node} [${tensor.shape.join(", ")}]\n${tensor.toString()}`);
  return 0;
}
