// logits: "last" — a causal LM's decoder that computes the head on the last fed position only (the slice from the end
// before the head): the same numbers as that row of the full logits, on cpu and wasm, the same greedy generation, and
// a loss over it refused by name.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import type { Executor } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { describe, expect, it } from "vitest";
import { ModelConfigError } from "./config-fields.js";
import type { GptModel } from "./gpt-model.js";
import { gptGraph } from "./gpt.js";
import { loadModel } from "./load-model.js";
import { maxDiff, modelCase } from "./test-cases.js";

const executors: [string, () => Executor][] = [
  ["cpu", () => createCpuExecutor()],
  ["wasm", () => createWasmExecutor()],
];

describe.each(executors)('decoder({ logits: "last" }) on %s', (_name, make) => {
  it("a prompt's step and a token's step give the last row of the full logits, shaped [B, 1, V]", async () => {
    const c = modelCase("gpt2-hf-layout-l1");
    const model = loadModel(c.bytes, { config: { n_head: 2 }, executors: [make()] }) as GptModel;
    const all = await model.decoder({ batch: 2 });
    const last = await model.decoder({ batch: 2, logits: "last" });
    const prompt = Tensor.int32([15, 3, 13, 7, 1, 22, 9, 4], [2, 4]);
    const token = Tensor.int32([5, 11], [2, 1]);
    for (const feed of [prompt, token]) {
      const full = (await all.step({ idx: feed }))["logits"]!;
      const one = (await last.step({ idx: feed }))["logits"]!;
      const [B, T, V] = full.shape as [number, number, number];
      expect(one.shape).toEqual([B, 1, V]);
      for (let b = 0; b < B; b++) {
        const want = Array.from({ length: V }, (_, v) => full.get(b, T - 1, v));
        const got = Array.from({ length: V }, (_, v) => one.get(b, 0, v));
        expect(maxDiff(got, want)).toBeLessThan(1e-6);
      }
    }
    await all.dispose();
    await last.dispose();
    await model.dispose();
  });

  it('greedy generation (which decodes with logits: "last") gives the tokens of the full forward re-run', async () => {
    const c = modelCase("gpt2-hf-layout-l1");
    const model = loadModel(c.bytes, { config: { n_head: 2 }, executors: [make()] }) as GptModel;
    const prompt = [15, 3, 13];
    const tokens = (await model.generateTokens([prompt], { maxNewTokens: 5, greedy: true }))[0]!;
    const seq = [...prompt];
    for (let i = 0; i < 5; i++) {
      const { logits } = await model.run({ idx: [seq] });
      const V = logits.shape[2]!;
      const row = Array.from({ length: V }, (_, v) => logits.get(0, seq.length - 1, v));
      seq.push(row.indexOf(Math.max(...row)));
    }
    expect(tokens).toEqual(seq);
    await model.dispose();
  });
});

describe("lastPosition with a loss", () => {
  it("is refused by name: the loss needs every position's logits", () => {
    const config = {
      blockSize: 8,
      vocabSize: 11,
      nLayer: 1,
      nHead: 2,
      nEmbd: 8,
      bias: true,
      layerNormEps: 1e-5,
      gelu: "tanh" as const,
      tied: true,
    };
    const e = thrownError(() => gptGraph(config, { loss: true, lastPosition: true }));
    expect(e).toBeInstanceOf(ModelConfigError);
    expect(e.message).toMatch(/unsupported: a loss over the last position's logits only/);
    expect(gptGraph(config, { lastPosition: true }).outputs).toEqual(["logits"]);
  });

  it("a decoder's logits option other than all or last is a typed error", async () => {
    const c = modelCase("gpt2-hf-layout-l1");
    const model = loadModel(c.bytes, { config: { n_head: 2 }, executors: [createCpuExecutor()] }) as GptModel;
    expect(() => model.decoder({ logits: "first" as "last" })).toThrow(/decoder logits/);
    await model.dispose();
  });
});
