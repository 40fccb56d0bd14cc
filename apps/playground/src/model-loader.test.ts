import { readFileSync } from "node:fs";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { describe, expect, it } from "vitest";
import { gptModelOf, needsHeads, NotGptModelError, readModelFile, suggestedHeads } from "./model-loader.js";

const golden = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../../packages/testkit/golden-models/${name}`, import.meta.url)));

describe("the Model tab's loader", () => {
  it("reads a nanoGPT file, asks for n_head, then loads it with the heads given", async () => {
    const file = readModelFile("nanogpt-bias-l2.safetensors", golden("nanogpt-bias-l2.safetensors"));
    expect(file.width).toBe(32);
    expect(suggestedHeads(file.width)).toBeUndefined();
    let error: unknown;
    try {
      gptModelOf(file, undefined, [createCpuExecutor()]);
    } catch (e) {
      error = e;
    }
    expect(needsHeads(error)).toBe(true);
    expect(String((error as Error).message)).toContain("config.n_head");
    const model = gptModelOf(file, 4, [createCpuExecutor()]);
    expect(model.config).toMatchObject({ nLayer: 2, nHead: 4, nEmbd: 32, vocabSize: 50, blockSize: 16 });
    expect(model.description).toContain("2 layers, 4 heads, n_embd 32");
    await model.dispose();
  });

  it("refuses an encoder layer in words, and passes the loader's own errors on", () => {
    const file = readModelFile("enc.safetensors", golden("torch-encoder-layer-normfirst-gelu.safetensors"));
    expect(() => gptModelOf(file, undefined, [createCpuExecutor()])).toThrow(NotGptModelError);
    expect(() => gptModelOf(file, undefined, [createCpuExecutor()])).toThrow(/runs GPT-2-family models .*this file is/);
    const bad = readModelFile("bad.safetensors", golden("nanogpt-bias-l2.safetensors"));
    const broken = new Map(bad.tensors);
    broken.delete("transformer.h.1.mlp.c_fc.weight");
    expect(() => gptModelOf({ ...bad, tensors: broken }, 4, [createCpuExecutor()])).toThrow(
      "transformer.h.1.mlp.c_fc.weight",
    );
    expect(() => readModelFile("x.safetensors", new Uint8Array(3))).toThrow(/safetensors/);
    expect(needsHeads(new Error("config.n_head"))).toBe(false);
  });

  it("suggests GPT-2's head counts for its widths", () => {
    expect([768, 1024, 1280, 1600].map(suggestedHeads)).toEqual([12, 16, 20, 25]);
  });
});
