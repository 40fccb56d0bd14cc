// A tiny Llama (fixtures/make_llama.py: torch, no transformers) loaded from its .safetensors under Hugging Face's
// LlamaForCausalLM names: PyTorch's logits, loss and greedy generation on cpu (GQA, untied, 2 layers; tied, 1 layer),
// one case on wasm and webgpu, and configs this port cannot honour refused by name.
import { readFileSync } from "node:fs";
import type { Executor } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import { readSafetensors } from "@attngraph/nn";
import { AttnGraphError, UnsupportedError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { ModelConfigError } from "./config-fields.js";
import { LlamaModel } from "./llama-model.js";
import { loadModel } from "./load-model.js";
import { maxDiff } from "./test-cases.js";

interface Fixture {
  readonly config: Record<string, unknown>;
  readonly idx: number[][];
  readonly targets: number[][];
  readonly logits: number[];
  readonly loss: number;
  readonly prompt: number[][];
  readonly greedy: number[][];
}

const fixture = (name: string): { bytes: Uint8Array; f: Fixture } => ({
  bytes: new Uint8Array(readFileSync(new URL(`../fixtures/${name}.safetensors`, import.meta.url))),
  f: JSON.parse(readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8")) as Fixture,
});

async function expectPyTorch(model: LlamaModel, f: Fixture, tol: number): Promise<void> {
  const { logits, loss } = await model.run({ idx: f.idx, targets: f.targets });
  expect(logits.shape).toEqual([2, 7, 48]);
  expect(maxDiff(logits.data, f.logits)).toBeLessThan(tol);
  expect(Math.abs(loss.data[0]! - f.loss)).toBeLessThan(tol);
  expect(await model.generateTokens(f.prompt, { maxNewTokens: 6, greedy: true })).toEqual(f.greedy);
}

describe("Llama from a Hugging Face LlamaForCausalLM checkpoint", () => {
  it("GQA (4 heads, 2 kv heads), 2 layers, own lm_head: detected by its keys; PyTorch's logits, loss and greedy tokens", async () => {
    const { bytes, f } = fixture("llama-tiny");
    const model = loadModel(bytes, { config: f.config, executors: [createCpuExecutor()] });
    expect(model).toBeInstanceOf(LlamaModel);
    expect(model.description).toMatch(
      /2 layers, 4 heads, 2 key\/value heads, hidden 32, intermediate 64, vocab 48, max positions 32, rope_theta 10000, lm_head its own/,
    );
    await expectPyTorch(model as LlamaModel, f, 2e-5);
    await model.dispose();
  });

  it("tied (no lm_head.weight), 1 layer, rope_theta 500: the sizes and kv heads from the shapes, only the heads given", async () => {
    const { bytes, f } = fixture("llama-tiny-tied");
    const model = loadModel(bytes, {
      config: { num_attention_heads: 4, rope_theta: 500, rms_norm_eps: 1e-5, max_position_embeddings: 32 },
      executors: [createCpuExecutor()],
    }) as LlamaModel;
    expect([model.config.tied, model.config.numKvHeads, model.config.numLayers]).toEqual([true, 2, 1]);
    expect(model.graph().weights.map((w) => w.name)).not.toContain("lm_head.weight");
    await expectPyTorch(model, f, 2e-5);
    expect([...model.stateDict().keys()].sort()).toEqual([...readSafetensors(bytes).tensors.keys()].sort());
    await model.dispose();
  });

  const others: readonly [string, () => Executor][] = [
    ["wasm", () => createWasmExecutor()],
    ["webgpu", () => createWebGpuExecutor()],
  ];
  it.each(others)("on %s: PyTorch's logits, loss and greedy tokens", async (_name, create) => {
    const { bytes, f } = fixture("llama-tiny");
    const executor = create();
    const model = loadModel(bytes, { family: "llama", config: f.config, executors: [executor] }) as LlamaModel;
    try {
      await expectPyTorch(model, f, 1e-4);
    } finally {
      await model.dispose();
      await executor.dispose?.();
    }
  });
});

describe("Llama configs and checkpoints that do not fit are refused by name", () => {
  const { bytes, f } = fixture("llama-tiny");
  const load = (config: Record<string, unknown>) => () => loadModel(bytes, { config });
  const subjectOf = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (e) {
      expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
      return (e as AttnGraphError).subject;
    }
    throw new Error("expected an error");
  };

  it("no num_attention_heads, or one that does not divide hidden_size or disagrees with k_proj", () => {
    expect(() => load({})()).toThrow(ModelConfigError);
    expect(subjectOf(load({}))).toBe("config.num_attention_heads");
    expect(subjectOf(load({ num_attention_heads: 5 }))).toBe("config.num_attention_heads");
    expect(subjectOf(load({ num_attention_heads: 4, num_key_value_heads: 4 }))).toBe("config.num_key_value_heads");
  });

  it("sizes that contradict the shapes name the field and the weight that says otherwise", () => {
    expect(() => load({ ...f.config, hidden_size: 64 })()).toThrow(
      /config\.hidden_size: disagrees with the checkpoint \(columns of model\.embed_tokens\.weight\) \(expected 32, got 64\)/,
    );
    expect(subjectOf(load({ ...f.config, intermediate_size: 32 }))).toBe("config.intermediate_size");
    expect(subjectOf(load({ ...f.config, num_hidden_layers: 3 }))).toBe("config.num_hidden_layers");
    expect(subjectOf(load({ ...f.config, tie_word_embeddings: "yes" }))).toBe("config.tie_word_embeddings");
    expect(subjectOf(load({ ...f.config, num_layers: 2 }))).toBe("config.num_layers");
  });

  it("what is not built is an UnsupportedError naming the field: rope_scaling, biases, another activation, head_dim", () => {
    for (const [key, value] of [
      ["rope_scaling", { type: "linear", factor: 2 }],
      ["attention_bias", true],
      ["mlp_bias", true],
      ["hidden_act", "gelu"],
      ["head_dim", 16],
      ["pretraining_tp", 2],
    ] as const) {
      const e = (() => {
        try {
          load({ ...f.config, [key]: value })();
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(e, key).toBeInstanceOf(UnsupportedError);
      expect((e as Error).message, key).toMatch(new RegExp(`^unsupported: .*config\\.${key}`));
    }
  });

  it("a missing layer weight is a StateDictError listing the file's key; a checkpoint of no known family says what it looked for", () => {
    const sd = readSafetensors(bytes).tensors;
    sd.delete("model.layers.1.mlp.up_proj.weight");
    expect(() => loadModel(sd, { config: f.config })).toThrow(/model\.layers\.1\.mlp\.up_proj\.weight/);
    expect(() => loadModel(new Map([["foo.weight", sd.get("model.norm.weight")!]]))).toThrow(
      /model\.embed_tokens\.weight \+ model\.layers\.0\.self_attn\.q_proj\.weight \(Llama\)/,
    );
  });
});
