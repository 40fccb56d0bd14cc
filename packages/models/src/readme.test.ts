// The README's examples, run as they are written there (the ```ts blocks, imports resolved here, files read from the
// golden-models cases): each public case loads and runs in a few lines, with PyTorch's numbers.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { goldenModelsDir } from "@attngraph/testkit";
import { Tensor } from "@attngraph/tensor";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import * as models from "./index.js";
import { maxDiff, modelCase } from "./test-cases.js";

const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** Runs README blocks as one async function body: their imports dropped (given here), `scope` as local names. */
async function run(code: string, scope: Record<string, unknown>): Promise<Record<string, unknown>> {
  const body = code.replace(/^import .*$/gm, "");
  const names = [...body.matchAll(/^const (\w+)|^const \{ ([\w, ]+) \}/gm)].flatMap((m) =>
    m[1] ? [m[1]] : m[2]!.split(",").map((n) => n.trim()),
  );
  const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
    ...args: string[]
  ) => (...a: unknown[]) => Promise<Record<string, unknown>>;
  const given = {
    ...models,
    createCpuExecutor,
    Tensor,
    readFileSync: (f: string) => readFileSync(join(goldenModelsDir, f)),
    ...scope,
  };
  const fn = new AsyncFunction(...Object.keys(given), `${body}\nreturn { ${names.join(", ")} };`);
  return fn(...Object.values(given));
}

describe("README examples", () => {
  it("the first block: nanoGPT's checkpoint loads and runs; then its training steps as nanoGPT takes them", async () => {
    const c = modelCase("nanogpt-bias-l2");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const t = c.train!;
    const [steps, B, T1] = t.batches.shape as [number, number, number];
    const rows = (s: number, from: number, to: number) =>
      Tensor.int32(
        Array.from({ length: B }, (_, b) => [
          ...t.batches.toInt32Array().subarray((s * B + b) * T1 + from, (s * B + b) * T1 + to),
        ]).flat(),
        [B, to - from],
      );
    const batches = Array.from({ length: steps }, (_, s) => ({ idx: rows(s, 0, T1 - 1), targets: rows(s, 1, T1) }));
    const got = await run(blocks[0]! + blocks[1]!, { batches });
    log.mockRestore();
    expect(got["tokens"]).toEqual([Array.from(c.generate!.greedy.toInt32Array())]);
    expect((got["logits"] as Tensor).shape).toEqual([1, 4, 50]);
    expect(maxDiff(got["losses"] as number[], t.losses)).toBeLessThan(1e-4);
    await (got["model"] as models.GptModel).dispose();
  });

  it("Hugging Face GPT-2's layout: greedy tokens as PyTorch's", async () => {
    const c = modelCase("gpt2-hf-layout-l1");
    const got = await run(blocks[2]!, {});
    expect(got["greedy"]).toEqual([Array.from(c.generate!.greedy.toInt32Array())]);
    await (got["gpt2"] as models.GptModel).dispose();
  });

  it("TransformerEncoderLayer with PyTorch's masks as they come: its output", async () => {
    const c = modelCase("torch-encoder-layer-normfirst-gelu");
    const got = await run(blocks[3]!, { src: c.inputs["src"] });
    expect(maxDiff((got["output"] as Tensor).data, c.expected.output!.data)).toBeLessThan(1e-4);
    await (got["layer"] as models.EncoderLayerModel).dispose();
  });

  it("MultiheadAttention from the package's fixture: the shapes it prints", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const fixture = (f: string) => readFileSync(fileURLToPath(new URL(`../${f}`, import.meta.url)));
    const got = await run(blocks[4]!, { readFileSync: fixture });
    const printed = log.mock.calls;
    log.mockRestore();
    expect(printed).toEqual([
      [
        [4, 2, 12],
        [2, 4, 6],
      ],
    ]);
    expect(got["mha"]).toBeInstanceOf(models.MhaModel);
    await (got["mha"] as models.MhaModel).dispose();
  });

  it("Llama (fixtures/llama-tiny): PyTorch's logits and greedy tokens", async () => {
    const fixture = (f: string) => readFileSync(fileURLToPath(new URL(`../${f}`, import.meta.url)));
    const want = JSON.parse(fixture("fixtures/llama-tiny.json").toString("utf8")) as {
      logits: number[];
      idx: number[][];
    };
    const got = await run(blocks[5]!, { readFileSync: fixture });
    const llama = got["llama"] as models.LlamaModel;
    expect((got["out"] as { logits: Tensor }).logits.shape).toEqual([1, 3, 48]);
    const { logits } = await llama.run({ idx: [want.idx[0]!] }); // the loaded model on the fixture's first row
    expect(maxDiff(logits.data, want.logits.slice(0, 7 * 48))).toBeLessThan(2e-5);
    expect((got["continued"] as number[][])[0]!.slice(0, 3)).toEqual([5, 17, 3]);
    expect((got["continued"] as number[][])[0]!.length).toBe(9);
    await llama.dispose();
  });

  it("each public case's example is at most five lines of code besides imports", () => {
    for (const b of blocks.slice(0, 6))
      expect(b.split("\n").filter((l) => l.trim() && !l.startsWith("import ")).length).toBeLessThanOrEqual(5);
  });
});
