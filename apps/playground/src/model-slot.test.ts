import { readFileSync } from "node:fs";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { describe, expect, it } from "vitest";
import { ModelSlot } from "./model-slot.js";

const bytes = new Uint8Array(
  readFileSync(new URL("../../../packages/testkit/golden-models/nanogpt-bias-l2.safetensors", import.meta.url)),
);
const cpuOnly = async (name: string) => {
  if (name !== "cpu") throw new Error(`${name}: not available here (test)`);
  return [createCpuExecutor()];
};

describe("ModelSlot", () => {
  it("asks for the heads, then loads; the decoder is compiled once and kept", async () => {
    const slot = new ModelSlot(cpuOnly);
    expect((await slot.load("cpu", 4)).kind).toBe("failed"); // no file yet
    const file = await slot.open("m.safetensors", bytes);
    expect(file.width).toBe(32);
    const missing = await slot.load("cpu", undefined);
    expect(missing.kind === "failed" && String(missing.error)).toContain("config.n_head");
    expect(missing.kind === "failed" && missing.headsHint).toBeUndefined(); // 32 is no GPT-2 width
    const out = await slot.load("cpu", 4);
    if (out.kind !== "loaded") throw new Error(`expected a model, got ${out.kind}`);
    expect(out.loaded.tokenizer).toBeUndefined(); // vocab 50: prompts are ids
    const d = out.loaded.decoder();
    expect(out.loaded.decoder()).toBe(d);
    expect((await d).maxLength).toBe(16);
    await slot.unload();
    expect(slot.loaded).toBeUndefined();
    expect(slot.file).toBe(file);
  });

  it("lets the newest load win: the one it overtook says stale and takes nothing", async () => {
    const slot = new ModelSlot(cpuOnly);
    await slot.open("m.safetensors", bytes);
    const [first, second] = await Promise.all([slot.load("cpu", 4), slot.load("cpu", 2)]);
    expect(first.kind).toBe("stale");
    expect(second.kind).toBe("loaded");
    expect(slot.loaded?.model.config.nHead).toBe(2);
    await slot.unload();
  });

  it("says why an executor cannot be used, and empties itself on a file it cannot read", async () => {
    const slot = new ModelSlot(cpuOnly);
    await slot.open("m.safetensors", bytes);
    const out = await slot.load("wasm", 4);
    expect(out.kind === "failed" && String(out.error)).toContain("wasm: not available here");
    await expect(slot.open("x.safetensors", new Uint8Array(4))).rejects.toThrow(/safetensors/);
    expect(slot.file).toBeUndefined();
    expect(slot.loaded).toBeUndefined();
  });
});
