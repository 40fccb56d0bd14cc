import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { MemoryLimitError } from "./errors.js";
import type { SessionEvent, TapEvent } from "./events.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true };
const ramp = (shape: number[]) =>
  Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(i)),
    shape,
  );
const weights = () =>
  attentionWeights(config, {
    W_query: ramp([8, 8]),
    W_key: ramp([8, 8]),
    W_value: ramp([8, 8]),
    out_proj: ramp([8, 8]),
    out_bias: ramp([8]),
  });
const session = (extra: object = {}) =>
  compile(buildAttention(config), { executors: [createCpuExecutor()], weights: weights(), ...extra });

describe("maxArenaBytes", () => {
  it("refuses, before allocating, a run whose value would pass the limit, naming the node; the session stays usable", async () => {
    const s = await session({ maxArenaBytes: 1024 ** 2 });
    // x [1, 1e5, 8] as a view of one float: 3.2 MB per projection.
    const err = await s.run({ x: new Tensor(new Float32Array(1), [1, 1e5, 8], [0, 0, 0]) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryLimitError);
    expect(AttnGraphError.isInstance(err) && err.code).toBe("memory-limit");
    expect((err as Error).message).toBe(
      "run 1: node queries: its output [1, 100000, 8] (float32) needs 3.1 MiB (3200000 bytes), over the limit of 1.0 MiB (maxArenaBytes 1048576)",
    );
    expect((await s.run({ x: ramp([1, 4, 8]) })).output!.shape).toEqual([1, 4, 8]);
  });

  it("defaults to 4 GiB and rejects a limit that is not a positive number", async () => {
    const s = await session();
    const err = await s
      .run({ x: new Tensor(new Float32Array(1), [1, 2 ** 28, 8], [0, 0, 0]) })
      .catch((e: unknown) => e);
    expect((err as MemoryLimitError).limit).toBe(4 * 1024 ** 3);
    await expect(session({ maxArenaBytes: -1 })).rejects.toThrow(/compile\.maxArenaBytes: invalid memory limit/);
    await expect(session({ taps: { buffer: 0 } })).rejects.toThrow(/compile\.taps\.buffer: invalid tap buffer/);
    await expect(session({ taps: { delivery: "later" } })).rejects.toThrow(
      /compile\.taps\.delivery: unknown tap delivery/,
    );
  });
});

describe("tap delivery", () => {
  it('"settle" (default): subscribers run after the last step and before run() settles; run-end comes after them', async () => {
    const s = await session();
    const order: string[] = [];
    s.events$.subscribe(
      (e) =>
        (e.type === "node-end" || e.type === "run-end") &&
        order.push(e.type === "run-end" ? "run-end" : `step ${e.node}`),
    );
    s.tap(["queries", "weights"]).subscribe((e) => order.push(`tap ${e.node}`));
    await s.run({ x: ramp([1, 3, 8]) });
    order.push("settled");
    expect(order.slice(-4)).toEqual(["tap queries", "tap weights", "run-end", "settled"]);
    expect(order.indexOf("tap queries")).toBeGreaterThan(order.lastIndexOf("step output"));
  });

  it("an aborted or failed run still delivers the tensors of the steps it finished", async () => {
    const s = await session();
    const got: string[] = [];
    s.tap("queries").subscribe((e) => got.push(`${e.runId}:${e.node}`));
    const ac = new AbortController();
    const sub = s.events$.subscribe((e) => e.type === "node-end" && e.node === "queries" && ac.abort());
    await expect(s.run({ x: ramp([1, 3, 8]) }, { signal: ac.signal })).rejects.toThrow(/aborted/);
    sub.unsubscribe();
    expect(got).toEqual(["1:queries"]);
  });

  it('"detached": run() settles first; events follow one per task; past `buffer` the oldest are dropped and counted', async () => {
    const s = await session({ taps: { delivery: "detached", buffer: 2 } });
    const got: TapEvent[] = [];
    const events: SessionEvent[] = [];
    s.events$.subscribe((e) => events.push(e));
    s.tap("weights").subscribe((e) => got.push(e));
    await Promise.all([1, 2, 3, 4, 5].map(() => s.run({ x: ramp([1, 3, 8]) })));
    expect(got).toEqual([]);
    for (let waited = 0; got.length < 2 && waited < 5_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 5)); // and nothing more arrives
    expect(got.map((e) => e.runId)).toEqual([4, 5]);
    expect(events.filter((e) => e.type === "tap-dropped")).toEqual(
      [1, 2, 3].map((runId, i) => ({ type: "tap-dropped", runId, node: "weights", dropped: i + 1 })),
    );
  });
});
