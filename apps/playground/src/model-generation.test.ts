import { readFileSync } from "node:fs";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { describe, expect, it } from "vitest";
import { gptModelOf, readModelFile } from "./model-loader.js";
import { startGeneration } from "./model-generation.js";
import { GENERATE_DEFAULTS } from "./model-settings.js";

const dir = new URL("../../../packages/testkit/golden-models/", import.meta.url);
const golden = JSON.parse(readFileSync(new URL("nanogpt-bias-l2.json", dir), "utf8")) as {
  generate: { prompt: { data: number[] }; max_new_tokens: number; greedy: { data: number[] } };
};
const model = () =>
  gptModelOf(readModelFile("m", new Uint8Array(readFileSync(new URL("nanogpt-bias-l2.safetensors", dir)))), 4, [
    createCpuExecutor(),
  ]);

describe("startGeneration", () => {
  it("streams the golden case's greedy tokens one by one, then says done", async () => {
    const m = model();
    const decoder = await m.decoder();
    const { prompt, max_new_tokens, greedy } = golden.generate;
    const got: number[] = [];
    await new Promise<void>((resolve, reject) => {
      startGeneration(
        decoder,
        prompt.data,
        { ...GENERATE_DEFAULTS, maxNewTokens: max_new_tokens, greedy: true },
        undefined,
        {
          onToken: (i, t) => (expect(i).toBe(got.length), got.push(t)),
          onDone: resolve,
          onError: reject,
        },
      );
    });
    expect([...prompt.data, ...got]).toEqual(greedy.data);
    await decoder.dispose();
    await m.dispose();
  });

  it("stops: no token and no done after stop()", async () => {
    const m = model();
    const decoder = await m.decoder();
    const got: number[] = [];
    let done = false;
    const g = startGeneration(decoder, [1, 2], { ...GENERATE_DEFAULTS, maxNewTokens: 10 }, undefined, {
      onToken: (_, t) => {
        got.push(t);
        if (got.length === 2) g.stop();
      },
      onDone: () => (done = true),
      onError: (e) => {
        throw e;
      },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(got.length).toBe(2);
    expect(done).toBe(false);
    await decoder.dispose();
    await m.dispose();
  });

  it("throws a bad prompt before anything runs", async () => {
    const m = model();
    const decoder = await m.decoder();
    const h = { onToken: () => {}, onDone: () => {}, onError: () => {} };
    expect(() => startGeneration(decoder, [1, 99], GENERATE_DEFAULTS, undefined, h)).toThrow("prompt[0][1]");
    await decoder.dispose();
    await m.dispose();
  });
});
