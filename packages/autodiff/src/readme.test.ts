// The README's example, kept runnable: if this fails, fix the README too.
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { expect, it, vi } from "vitest";
import { grad } from "./index.js";

it("runs the README example with the output it shows", async () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const graph = buildAttention({ dIn: 4, dOut: 4, numHeads: 2, causal: true, outProj: true, outBias: false });
  const g = grad(graph, { loss: "output", wrt: ["x", "W_query"] });
  const w = (n: number, m: number) =>
    Tensor.from(
      Array.from({ length: n * m }, (_, i) => Math.sin(i + n) * 0.3),
      [n, m],
    );
  const weights = { W_query: w(4, 4), W_key: w(4, 4), W_value: w(4, 4), out_proj: w(4, 4) };
  const session = await compile(g.graph, { executors: [createCpuExecutor()], weights });
  session.tap("weights.grad").subscribe(({ tensor }) => console.log(`weights.grad ${tensor.shape.join("x")}`));
  const x = Tensor.from(
    Array.from({ length: 12 }, (_, i) => Math.cos(i)),
    [1, 3, 4],
  );
  const out = await session.run({ x, "output.grad": Tensor.from(new Array(12).fill(1), [1, 3, 4]) });
  console.log(`W_query.grad ${out["W_query.grad"]!.shape.join("x")}`);
  await session.dispose();
  const printed = log.mock.calls;
  log.mockRestore();
  expect(printed).toEqual([["weights.grad 1x2x3x3"], ["W_query.grad 4x4"]]);
});
