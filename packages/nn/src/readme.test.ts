// The README's example, kept runnable: if this fails, fix the README too.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { expect, it, vi } from "vitest";
import { loadStateDict, readSafetensors, simpleTransformer, writeSafetensors } from "./index.js";

it("runs the README example with the output it shows", async () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const graph = simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 });
  const stateDict = Object.fromEntries(
    graph.weights.map((w) => [
      w.name,
      Tensor.from(
        Array.from({ length: (w.shape as number[]).reduce((a, d) => a * d, 1) }, (_, i) => Math.sin(i) * 0.1),
        w.shape as number[],
      ),
    ]),
  );
  const { tensors } = readSafetensors(writeSafetensors(stateDict));
  const session = await compile(graph, { executors: [createCpuExecutor()], weights: loadStateDict(graph, tensors) });
  session
    .tap("transformer.attention.weights")
    .subscribe(({ tensor }) => console.log(`head weights ${tensor.shape.join("x")}`));
  const { output } = await session.run({ tokens: Tensor.int32([1, 2, 3, 4, 5, 6, 7, 8], [1, 8]) });
  console.log(`logits ${output!.shape.join("x")}`);
  const printed = log.mock.calls;
  log.mockRestore();
  expect(printed).toEqual([["head weights 1x4x8x8"], ["logits 1x8x10"]]);
  await session.dispose();
});
