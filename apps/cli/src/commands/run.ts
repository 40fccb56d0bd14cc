import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { loadAnyCase } from "@attngraph/testkit";
import { clip, type AnyTensor, type Tensor } from "@attngraph/tensor";
import type { OpGraph } from "@attngraph/graph";
import { REPRO_FORMAT } from "@attngraph/tools";
import { buildTrainCase } from "../conformance/run-train-case.js";
import { formatOf } from "../diff-subject.js";
import { replay } from "../replay.js";
import { loadUserOps } from "../user-ops.js";
import { executorsFor } from "../executors.js";
import { UsageError, type IO } from "../io.js";

export const runHelp = `attngraph run <case.json> [--executor cpu] [--tap <node>]... [--tap all] [--fused-qkv] [--explain]
  Runs one golden case (an attention case, or a golden-train case: block, mha-backward, train — its forward pass) and
  prints the tapped tensors (default: the outputs) in PyTorch's format.
attngraph run <repro.json> [--ops <module.js>]
  Replays a repro written by \`attngraph diff\` on the two executors it names; exit status 1 while they still disagree.`;

export async function run(args: { positionals: string[]; executor: string; tap: string[]; fusedQkv: boolean; explain: boolean; ops?: string; threads?: number | undefined }, io: IO): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new UsageError(`missing <case.json>\n${runHelp}`);
  if (formatOf(file) === REPRO_FORMAT) return await replay(file, args.ops ? await loadUserOps(args.ops) : undefined, io);
  if (args.ops) throw new UsageError("--ops is for replaying a repro (and for diff); a golden case uses the built-in ops");
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
  const session = await compile(graph, { executors: executorsFor(args.executor, undefined, { threads: args.threads }), weights });
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
