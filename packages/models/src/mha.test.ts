// torch.nn.MultiheadAttention loaded by its own state_dict names (fixtures/make_mha.py): PyTorch's attn_output and
// attn_output_weights (averaged and per head) on cpu, the packed self-attention case on wasm and webgpu too; every
// checkpoint, config and input that does not fit is a typed error naming it before anything runs.
import type { Executor } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import { readSafetensors, writeSafetensors, StateDictError } from "@attngraph/nn";
import { Tensor, UnsupportedError } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { describe, expect, it } from "vitest";
import { ModelConfigError } from "./config-fields.js";
import { loadModel } from "./load-model.js";
import { MhaModel } from "./mha-model.js";
import { maxDiff } from "./test-cases.js";
import { mhaCase, mhaForward } from "./test-mha-cases.js";

const cpu = [createCpuExecutor()];
const CASES = ["mha-packed-self-batchfirst", "mha-kdim-vdim-seqfirst", "mha-packed-cross-nobias"] as const;

function load(name: string, executors: readonly Executor[] = cpu): MhaModel {
  const c = mhaCase(name);
  return loadModel(c.bytes, { config: c.config, executors: [...executors] }) as MhaModel;
}

describe("torch.nn.MultiheadAttention on cpu", () => {
  it.each(CASES)("%s: attn_output and the head-averaged attn_output_weights are PyTorch's", async (name) => {
    const c = mhaCase(name);
    const model = load(name);
    expect(model).toBeInstanceOf(MhaModel);
    const { attn_output, attn_output_weights } = await model.run(mhaForward(c));
    expect(attn_output.shape).toEqual(c.expected.attn_output.shape);
    expect(maxDiff(attn_output.data, c.expected.attn_output.data)).toBeLessThan(2e-5);
    expect(attn_output_weights!.shape).toEqual(c.expected.attn_output_weights.shape);
    expect(maxDiff(attn_output_weights!.data, c.expected.attn_output_weights.data)).toBeLessThan(2e-5);
    await model.dispose();
  });

  it.each(CASES)(
    "%s: average_attn_weights=False gives the weights per head [B, H, L, S]; need_weights=False gives null",
    async (name) => {
      const c = mhaCase(name);
      const model = load(name);
      const perHead = await model.run({ ...mhaForward(c), average_attn_weights: false });
      expect(perHead.attn_output_weights!.shape).toEqual(c.expected.attn_output_weights_per_head.shape);
      expect(maxDiff(perHead.attn_output_weights!.data, c.expected.attn_output_weights_per_head.data)).toBeLessThan(
        2e-5,
      );
      const none = await model.run({ ...mhaForward(c), need_weights: false });
      expect(none.attn_output_weights).toBeNull();
      expect(maxDiff(none.attn_output.data, c.expected.attn_output.data)).toBeLessThan(2e-5);
      await model.dispose();
    },
  );

  it("the family is read off the keys; the description says what was found; the graph loads the module's own names", () => {
    const packed = load("mha-packed-self-batchfirst");
    expect(packed.description).toBe(
      "torch.nn.MultiheadAttention(embed_dim=16, num_heads=4, bias=True, kdim=16, vdim=16, batch_first=True)",
    );
    expect(
      packed
        .graph({ selfAttention: true })
        .weights.map((w) => w.name)
        .sort(),
    ).toEqual(["in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]);
    const split = load("mha-kdim-vdim-seqfirst");
    expect(
      split
        .graph()
        .weights.map((w) => w.name)
        .sort(),
    ).toEqual(["in_proj_bias", "k_proj_weight", "out_proj.bias", "out_proj.weight", "q_proj_weight", "v_proj_weight"]);
    const c = mhaCase("mha-packed-cross-nobias");
    const named: MhaModel = loadModel(c.bytes, { family: "MultiheadAttention", config: { num_heads: 2 } }); // typed by the family
    expect(named).toBeInstanceOf(MhaModel);
  });

  it("self-attention through three inputs (copies, not the same tensor) equals the packed one-input graph", async () => {
    const c = mhaCase("mha-packed-self-batchfirst");
    const model = load("mha-packed-self-batchfirst");
    const q = c.inputs["query"] as Tensor;
    const copy = () => Tensor.from(q.data.slice(), q.shape);
    const { graph } = model.prepare({ ...mhaForward(c), key: copy(), value: copy() });
    expect(graph.inputs.map((v) => v.name)).toEqual(expect.arrayContaining(["query", "key", "value"]));
    const out = await model.run({ ...mhaForward(c), key: copy(), value: copy() });
    expect(maxDiff(out.attn_output.data, c.expected.attn_output.data)).toBeLessThan(2e-5);
    await model.dispose();
  });

  it("is_causal gives the causal mask PyTorch's bool attn_mask gave; an additive −∞ mask and nested booleans do too", async () => {
    const c = mhaCase("mha-packed-self-batchfirst");
    const model = load("mha-packed-self-batchfirst");
    const { attn_mask: _mask, ...rest } = mhaForward(c);
    const L = 5;
    const causal = await model.run({ ...rest, is_causal: true });
    expect(maxDiff(causal.attn_output.data, c.expected.attn_output.data)).toBeLessThan(2e-5);
    const bools = Array.from({ length: L }, (_, i) => Array.from({ length: L }, (_, j) => j > i));
    const additive = Tensor.from(
      bools.flat().map((m) => (m ? -Infinity : 0)),
      [L, L],
    );
    for (const attn_mask of [bools, additive]) {
      const out = await model.run({ ...rest, attn_mask });
      expect(maxDiff(out.attn_output.data, c.expected.attn_output.data)).toBeLessThan(2e-5);
      expect(maxDiff(out.attn_output_weights!.data, c.expected.attn_output_weights.data)).toBeLessThan(2e-5);
    }
    await model.dispose();
  });

  it("written back as a state_dict: the same keys and values, and PyTorch's numbers again", async () => {
    const c = mhaCase("mha-kdim-vdim-seqfirst");
    const model = load("mha-kdim-vdim-seqfirst");
    const original = readSafetensors(c.bytes).tensors;
    const written = readSafetensors(writeSafetensors(model.stateDict())).tensors;
    expect([...written.keys()].sort()).toEqual([...original.keys()].sort());
    for (const [k, t] of written) expect(maxDiff(t.data, original.get(k)!.data), k).toBe(0);
    await model.dispose();
  });
});

describe.each([
  ["wasm", () => createWasmExecutor()],
  ["webgpu", () => createWebGpuExecutor()],
] as const)("torch.nn.MultiheadAttention on %s", (_name, create) => {
  it("every case (packed self-attention, kdim/vdim, packed weights sliced for cross-attention): PyTorch's numbers", async () => {
    const executor = create();
    try {
      for (const name of CASES) {
        const c = mhaCase(name);
        const model = load(name, [executor]);
        const out = await model.run({ ...mhaForward(c), average_attn_weights: false });
        expect(maxDiff(out.attn_output.data, c.expected.attn_output.data), name).toBeLessThan(1e-4);
        expect(maxDiff(out.attn_output_weights!.data, c.expected.attn_output_weights_per_head.data), name).toBeLessThan(
          1e-4,
        );
        await model.dispose();
      }
    } finally {
      await executor.dispose?.();
    }
  });
});

describe("torch.nn.MultiheadAttention: what does not fit is named", () => {
  const sd = () => new Map(readSafetensors(mhaCase("mha-packed-self-batchfirst").bytes).tensors);

  it("add_bias_kv (bias_k / bias_v keys) and add_zero_attn are refused by name", () => {
    const withBiasKv = sd();
    withBiasKv.set("bias_k", Tensor.zeros([1, 1, 16]));
    withBiasKv.set("bias_v", Tensor.zeros([1, 1, 16]));
    expect(() => loadModel(withBiasKv, { config: { num_heads: 4 } })).toThrow(UnsupportedError);
    expect(() => loadModel(withBiasKv, { config: { num_heads: 4 } })).toThrow(/^unsupported: add_bias_kv/);
    expect(() => loadModel(sd(), { config: { num_heads: 4, add_bias_kv: true } })).toThrow(/^unsupported: add_bias_kv/);
    expect(() => loadModel(sd(), { config: { num_heads: 4, add_zero_attn: true } })).toThrow(
      /^unsupported: add_zero_attn/,
    );
  });

  it("num_heads is needed; config fields that contradict the shapes name both", () => {
    expect(() => loadModel(sd())).toThrow(/config\.num_heads: the number of heads is in no weight's shape: pass it/);
    expect(() => loadModel(sd(), { config: { num_heads: 3 } })).toThrow(
      /config\.num_heads: num_heads must divide embed_dim \(expected a divisor of 16, got 3\)/,
    );
    const split = mhaCase("mha-kdim-vdim-seqfirst");
    expect(() => loadModel(split.bytes, { config: { num_heads: 3, kdim: 6 } })).toThrow(
      /config\.kdim: disagrees with the checkpoint \(columns of k_proj_weight\) \(expected 5, got 6\)/,
    );
    expect(() => loadModel(split.bytes, { config: { num_heads: 3, vdim: 5 } })).toThrow(
      /config\.vdim: disagrees with the checkpoint \(columns of v_proj_weight\) \(expected 7, got 5\)/,
    );
    expect(() => loadModel(sd(), { config: { num_heads: 4, kdim: 5 } })).toThrow(
      /config\.kdim: disagrees with the checkpoint \(in_proj_weight is packed, so kdim = embed_dim\)/,
    );
    expect(() => loadModel(sd(), { config: { num_heads: 4, embed_dim: 8 } })).toThrow(/config\.embed_dim: disagrees/);
    expect(() => loadModel(sd(), { config: { num_heads: 4, bias: false } })).toThrow(ModelConfigError);
    expect(() => loadModel(sd(), { config: { num_heads: 4, nhead: 4 } })).toThrow(
      /config\.nhead: not an argument of torch\.nn\.MultiheadAttention/,
    );
  });

  it("a checkpoint that does not fit lists every missing and mis-shaped key by its own name", () => {
    const bad = sd();
    bad.delete("out_proj.bias");
    bad.set("in_proj_bias", Tensor.zeros([16]));
    const error = thrownError(() => loadModel(bad, { config: { num_heads: 4 } }));
    expect(error).toBeInstanceOf(StateDictError);
    const e = error as StateDictError;
    expect(e.message).toMatch(/torch\.nn\.MultiheadAttention \(its state_dict names, embed_dim 16/);
    expect(e.missing).toEqual(["out_proj.bias"]);
    expect(e.misShaped).toEqual([{ key: "in_proj_bias", expected: "[48]", got: "[16]" }]);
  });

  it("wrong input shapes are named before anything runs", async () => {
    const c = mhaCase("mha-kdim-vdim-seqfirst");
    const model = load("mha-kdim-vdim-seqfirst");
    const f = mhaForward(c); // query [4, 2, 12], key [6, 2, 5], value [6, 2, 7], seq-first
    await expect(model.run({ ...f, query: Tensor.zeros([2, 4, 8]) })).rejects.toThrow(
      /query: the module's query input \(expected a float32 tensor \[L, B, 12\] \(batch_first=False/,
    );
    await expect(model.run({ ...f, key: Tensor.zeros([6, 2, 12]) })).rejects.toThrow(
      /key: the module's key input \(expected a float32 tensor \[S, B, 5\].*got float32 \[6, 2, 12\]/,
    );
    await expect(model.run({ ...f, value: Tensor.zeros([5, 2, 7]) })).rejects.toThrow(
      /value: key and value must have the same length S \(expected S = 6/,
    );
    await expect(model.run({ ...f, key: Tensor.zeros([6, 3, 5]) })).rejects.toThrow(
      /key: batch must match the query's \(expected B = 2, got 3\)/,
    );
    await expect(model.run({ ...f, value: undefined })).rejects.toThrow(/value: .*got none/);
    const q = Tensor.zeros([4, 2, 12]); // one tensor as query, key and value: its width 12 is not kdim 5
    await expect(model.run({ query: q, key: q, value: q })).rejects.toThrow(
      /key: the module's key input \(expected a float32 tensor \[S, B, 5\]/,
    );
    await expect(model.run({ ...f, attn_mask: Tensor.zeros([4, 4]) })).rejects.toThrow(
      /attn_mask: the attention mask is \[L, S\].*expected \[4, 6\], got \[4, 4\]/,
    );
    await expect(model.run({ ...f, key_padding_mask: Tensor.int32([0, 0], [2, 1]) })).rejects.toThrow(
      /key_padding_mask: the key padding mask is \[B, S\].*expected \[2, 6\]/,
    );
    await expect(model.run({ ...f, attn_mask: undefined })).resolves.toBeDefined(); // still usable after the errors
    await model.dispose();
  });
});
