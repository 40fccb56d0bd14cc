// The wasm executor under the runtime, the way users run it: weights uploaded once per session, inputs per run and
// released after it, planned arenas pooled, so 50 runs leave the memory where the first ones put it.
import { describe, expect, it } from "vitest";
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { random, wasmExecutor, worst } from "./test-util.js";

const config = { dIn: 32, dOut: 32, numHeads: 4, causal: true };
const raw = (seed: number) => ({
  W_query: { shape: [32, 32], data: random([32, 32], seed).toFloat32Array() },
  W_key: { shape: [32, 32], data: random([32, 32], seed + 1).toFloat32Array() },
  W_value: { shape: [32, 32], data: random([32, 32], seed + 2).toFloat32Array() },
  out_proj: { shape: [32, 32], data: random([32, 32], seed + 3).toFloat32Array() },
  out_bias: { shape: [32], data: random([32], seed + 4).toFloat32Array() },
});

describe("wasm executor in a session", () => {
  it("50 runs: memory stays flat after warm-up, weights are uploaded once, inputs released every run", async () => {
    const wasm = await wasmExecutor();
    const graph = multiHeadAttention(config);
    const session = await compile(graph, { executors: [wasm], weights: attentionWeights(config, raw(1)) });
    const x = random([2, 40, 32], 9);
    const first = (await session.run({ x })).output!;
    const taps: number[] = [];
    const sub = session.tap("weights").subscribe((e) => taps.push(e.runId));
    await session.run({ x }); // warm-up of the tapped (unfused) plan too
    sub.unsubscribe();
    const bytes = wasm.memory.buffer.byteLength;
    const inUse = wasm.inUseBytes;
    const uploads = wasm.stats.uploads;
    for (let i = 0; i < 50; i++) {
      const out = (await session.run({ x: random([2, 40, 32], 9) })).output!;
      expect(worst(out, first, 0, 0), `run ${i}`).toBe(0);
      expect(wasm.memory.buffer.byteLength, `memory after run ${i}`).toBe(bytes);
      expect(wasm.inUseBytes, `live bytes after run ${i}`).toBe(inUse);
    }
    expect(wasm.stats.uploads - uploads, "one upload per run: the input, never the weights").toBe(50);
    expect(taps).toHaveLength(1);
    await session.dispose();
    expect(wasm.inUseBytes, "dispose frees the weights and the arenas").toBe(0);
  });

  it("matches the CPU executor on the same graph, fused and with every node tapped", async () => {
    const graph = multiHeadAttention({ ...config, causal: false });
    const weights = attentionWeights({ ...config, causal: false }, raw(20));
    const x = random([3, 17, 32], 3);
    const wasm = await compile(graph, { executors: [await wasmExecutor()], weights });
    const { createCpuExecutor } = await import("@attngraph/executor-cpu");
    const cpu = await compile(graph, { executors: [createCpuExecutor()], weights });
    const want = (await cpu.run({ x })).output!;
    expect(worst((await wasm.run({ x })).output!, want)).toBeLessThan(1);
    const seen: string[] = [];
    const sub = wasm.tap(() => true).subscribe((e) => seen.push(e.node));
    expect(worst((await wasm.run({ x })).output!, want)).toBeLessThan(1);
    sub.unsubscribe();
    expect(seen).toContain("weights");
  });
});
