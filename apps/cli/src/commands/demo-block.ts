// `attngraph demo block`: the worked example's pre-norm transformer block (embed 16, 4 heads, GELU MLP, causal mask
// input) from its golden case, run on the chosen executor with the block's named intermediates printed from the stream
// and each compared with PyTorch's numbers.
import { loadStateDict, transformerBlock, type BlockConfigInput } from "@attngraph/nn";
import { compile } from "@attngraph/runtime";
import { clip, compare, type Tensor } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { join } from "node:path";
import { executorsFor } from "../executors.js";
import type { IO } from "../io.js";

/** The intermediates the worked example prints, in order, with the golden names they are compared with. */
const SHOWN: readonly (readonly [node: string, golden: string])[] = [
  ["ln1", "ln1"],
  ["attention.weights", "weights"],
  ["attention", "attention"],
  ["residual", "residual"],
  ["ln2", "ln2"],
  ["mlp.hidden", "mlp.hidden"],
  ["mlp.gelu", "mlp.gelu"],
  ["mlp", "mlp"],
  ["output", "output"],
];

export async function demoBlock(args: { executor: string; threads?: number | undefined }, io: IO): Promise<number> {
  const c = loadAnyCase(join(goldenTrainDir, "block-causal-b2-t10-e16-h4.json")).case as TrainCase;
  const graph = transformerBlock(c.config as unknown as BlockConfigInput, { mask: true });
  const session = await compile(graph, {
    executors: executorsFor(args.executor, undefined, { threads: args.threads }),
    weights: loadStateDict(graph, c.params),
  });
  const x = c.inputs["x"]!;
  const mask = c.inputs["mask"]!;
  io.out("attngraph demo block: pre-norm transformer block (embed 16, 4 heads, 4x GELU MLP, causal mask input)");
  io.out(
    `parameters by PyTorch state_dict name and input from the worked example (${c.name}); executor: ${clip(args.executor)}\n`,
  );
  io.out(session.explain({ watched: SHOWN.map(([n]) => n), inputs: { x: x.shape, mask: mask.shape } }));
  const got = new Map<string, Tensor>();
  const sub = session.tap(SHOWN.map(([n]) => n)).subscribe((e) => got.set(e.node, e.tensor));
  await session.run({ x, mask });
  sub.unsubscribe();
  await session.dispose();
  io.out(`\nmask [${mask.shape.join(", ")}]\n${mask.toString()}`);
  let ok = true;
  for (const [node, golden] of SHOWN) {
    const t = got.get(node)!;
    const r = compare(t, c.expected[golden]!, c.tolerance);
    ok &&= r.ok;
    io.out(
      `\n${node} [${t.shape.join(", ")}]  ${r.ok ? "matches PyTorch" : `DIFFERS from PyTorch (${r.failures} values off)`}\n${t.toString()}`,
    );
  }
  io.out(
    `\nevery intermediate matches PyTorch (float64 reference, tolerance ${c.tolerance.abs}): ${ok ? "yes" : "NO"}`,
  );
  return ok ? 0 : 1;
}
