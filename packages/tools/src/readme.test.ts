// The README's example, kept runnable: if this fails, fix the README too.
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { expect, it, vi } from "vitest";
import { ablateHeads, patchFrom, runWithCache } from "./index.js";

it("runs the README example; the heads' recoveries add up to 100 %", async () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  // README: from here
  const config = { dIn: 4, dOut: 4, numHeads: 2, causal: true };
  const w = (n: number, m: number, k: number) =>
    Tensor.from(
      Array.from({ length: n * m }, (_, i) => Math.sin(i * k) * 0.5),
      [n, m],
    );
  const weights = attentionWeights(config, {
    W_query: w(4, 4, 1),
    W_key: w(4, 4, 2),
    W_value: w(4, 4, 3),
    out_proj: w(4, 4, 4),
    out_bias: w(1, 4, 5).reshape([4]),
  });
  const session = await compile(multiHeadAttention(config), { executors: [createCpuExecutor()], weights });
  const clean = Tensor.from(
    Array.from({ length: 12 }, (_, i) => Math.cos(i)),
    [1, 3, 4],
  );
  const corrupted = Tensor.from(
    Array.from({ length: 12 }, (_, i) => Math.cos(i + 5)),
    [1, 3, 4],
  );
  const metric = (o: Record<string, Tensor>) => o.output!.toFloat32Array()[0]!; // the first output element

  const cleanRun = await runWithCache(session, { x: clean }, ["context.heads"]);
  const { effects } = await patchFrom(
    session,
    cleanRun,
    { x: corrupted },
    { nodes: ["context.heads"], metric, perHead: true },
  );
  for (const e of effects) console.log(`head ${e.head}: recovers ${(100 * e.recovered!).toFixed(0)}%`);

  const restore = ablateHeads(session, "weights", [0]);
  console.log(`without head 0: ${metric(await session.run({ x: clean })).toFixed(3)}`);
  restore();
  // README: to here
  const printed = log.mock.calls.map((c) => String(c[0]));
  log.mockRestore();
  expect(printed).toHaveLength(3);
  const pct = printed.slice(0, 2).map((l) => Number(/recovers (-?\d+)%/.exec(l)![1]));
  expect(Math.abs(pct[0]! + pct[1]! - 100)).toBeLessThanOrEqual(1);
  expect(printed[2]).toMatch(/^without head 0: -?\d+\.\d{3}$/);
  expect(effects.reduce((a, e) => a + e.recovered!, 0)).toBeCloseTo(1, 4);
  await session.dispose();
});
