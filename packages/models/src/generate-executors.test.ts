// generate() on every executor: greedy decoding through the KV cache (prompt, then one token a step, cropped past
// blockSize) equals greedy decoding by re-running the full graph on the same executor, and the logits agree with
// cpu's. Sampling is on the host, so a seed gives the same tokens wherever the logits round to the same draws.
import type { Executor } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import { firstValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { generate, generateTokens } from "./generate.js";
import { fullGreedyWithLogits, tinyDecoder } from "./test-lm.js";

const executors: readonly [string, () => Executor][] = [
  ["cpu", () => createCpuExecutor()],
  ["wasm", () => createWasmExecutor()],
  ["webgpu", () => createWebGpuExecutor()],
];
const rows = [
  [3, 1, 4],
  [9, 2, 6],
];

describe.each(executors)("generate on %s", (_name, create) => {
  it("greedy through the decoder (batch 2, past blockSize) equals greedy by full re-runs, and cpu's logits", async () => {
    const executor = create();
    const reference = await fullGreedyWithLogits(createCpuExecutor(), rows, 8, 6);
    const want = await fullGreedyWithLogits(executor, rows, 8, 6);
    const dec = await tinyDecoder(executor, 6, 2);
    try {
      const events = await firstValueFrom(
        generate(dec, rows, { maxNewTokens: 8, greedy: true, logits: true }).pipe(toArray()),
      );
      const tokens = rows.map((r, b) => [...r, ...events.map((e) => (e.token as number[])[b]!)]);
      expect(tokens).toEqual(want.tokens);
      expect(tokens).toEqual(reference.tokens);
      events.forEach((e, i) =>
        (e.logits as Float32Array[]).forEach((row, b) =>
          row.forEach((v, j) => expect(Math.abs(v - reference.logits[i]![b]![j]!)).toBeLessThan(1e-3)),
        ),
      );
      const seeded = { maxNewTokens: 8, temperature: 0.8, topK: 5, seed: 3 } as const;
      expect(await generateTokens(dec, rows, seeded)).toEqual(await generateTokens(dec, rows, seeded));
    } finally {
      await dec.dispose();
      await executor.dispose?.();
    }
  });
});
