// The demo: the causal multi-head attention of the worked examples (d_in = d_out = 6, two heads, output projection),
// run on the default executor, printing every intermediate tensor by subscribing to the stream, like the examples did
// with print().
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile, type SessionEvent } from "@attngraph/runtime";
import { goldenDir, loadCase } from "@attngraph/testkit";
import { clip, compare, type Tensor } from "@attngraph/tensor";
import { join } from "node:path";
import { executorsFor } from "../executors.js";
import type { CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";
import { demoBlock } from "./demo-block.js";

export const demoCommand: CommandLine = { flags: ["executor", "threads"], operand: "[attention | block]" };

/** `attngraph demo [attention|block]`: the attention of the worked examples (default) or their transformer block. */
export async function demo(
  args: { executor: string; positionals: readonly string[]; threads?: number | undefined },
  io: IO,
): Promise<number> {
  const which = args.positionals[0] ?? "attention";
  if (which === "block") return demoBlock(args, io);
  if (which !== "attention") throw new UsageError(`unknown demo "${clip(which)}": expected attention or block`);
  return demoAttention(args, io);
}

async function demoAttention(args: { executor: string; threads?: number | undefined }, io: IO): Promise<number> {
  const c = loadCase(join(goldenDir, "seed-002-mha-outproj-eval.json"));
  const graph = buildAttention(c.config);
  const session = await compile(graph, {
    executors: executorsFor(args.executor, undefined, { threads: args.threads }),
    weights: attentionWeights(c.config, c.weights),
  });

  io.out("attngraph demo: causal multi-head attention (d_in=6, d_out=6, num_heads=2, output projection with bias)");
  io.out(`weights and input from the worked example (${c.name}); executor: ${clip(args.executor)}\n`);
  // Every node is tapped, so the plan keeps every node as its own step; untapped, the middle would fuse.
  const all = graph.nodes.map((n) => n.name);
  io.out(session.explain({ watched: all, inputs: { x: c.inputs.x!.shape } }));
  const fusion = session.plan.passes.find((p) => p.pass === "fusion");
  if (fusion) io.out(`(untapped, the same graph runs in ${session.plan.steps.length} steps: ${fusion.summary})`);

  const tensors: { node: string; tensor: Tensor }[] = [];
  const timings: SessionEvent[] = [];
  const taps = session.tap(all).subscribe((e) => tensors.push(e));
  const events = session.events$.subscribe((e) => e.type === "node-end" && timings.push(e));
  const { [graph.outputs[0]!]: output } = await session.run(c.inputs);
  taps.unsubscribe();
  events.unsubscribe();

  io.out(`\nx [${c.inputs.x!.shape.join(", ")}]\n${c.inputs.x!.toString()}`);
  for (const { node, tensor } of tensors) io.out(`\n${node} [${tensor.shape.join(", ")}]\n${tensor.toString()}`);
  io.out("\nper-node time (ms):");
  for (const e of timings)
    if (e.type === "node-end") io.out(`  ${e.node.padEnd(14)} ${e.executor.padEnd(5)} ${e.ms.toFixed(3)}`);
  const check = compare(output!, c.expected.output!, c.tolerance);
  io.out(
    `\noutput matches PyTorch (float64 reference, tolerance ${c.tolerance.abs}): ${check.ok ? "yes" : `NO (${check.failures} values off)`}`,
  );
  await session.dispose();
  return check.ok ? 0 : 1;
}
