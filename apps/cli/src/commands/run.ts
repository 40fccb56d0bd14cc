import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { loadCase } from "@attngraph/testkit";
import { clip, type Tensor } from "@attngraph/tensor";
import { executorsFor } from "../executors.js";
import { UsageError, type IO } from "../io.js";

export const runHelp = `attngraph run <case.json> [--executor cpu] [--tap <node>]... [--tap all] [--fused-qkv] [--explain]
  Runs one golden case and prints the tapped tensors (default: output) in PyTorch's format.`;

export async function run(args: { positionals: string[]; executor: string; tap: string[]; fusedQkv: boolean; explain: boolean }, io: IO): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new UsageError(`missing <case.json>\n${runHelp}`);
  const c = loadCase(file);
  const graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs, fusedQkv: args.fusedQkv });
  const session = await compile(graph, { executors: executorsFor(args.executor), weights: attentionWeights(c.config, c.weights, { fusedQkv: args.fusedQkv }) });
  if (args.explain) io.out(`${session.explain()}\n`);
  const taps = args.tap.length ? args.tap : [graph.outputs[0]!];
  const tapped: { node: string; tensor: Tensor }[] = [];
  const sub = session.tap(taps.includes("all") ? () => true : taps).subscribe((e) => tapped.push(e));
  try {
    await session.run(c.inputs);
  } finally {
    sub.unsubscribe();
    await session.dispose();
  }
  io.out(`${clip(c.name)} on ${clip(args.executor)}`);
  for (const { node, tensor } of tapped) io.out(`\n${node} [${tensor.shape.join(", ")}]\n${tensor.toString()}`);
  return 0;
}
