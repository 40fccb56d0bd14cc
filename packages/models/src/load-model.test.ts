// loadModel on checkpoints as PyTorch users save them (the golden-models cases): the family and layout read off the
// keys, the config completed from the shapes, the numbers PyTorch computed; every misfit of a checkpoint named at once.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { readSafetensors, writeSafetensors, StateDictError } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { describe, expect, it } from "vitest";
import { ModelConfigError } from "./config-fields.js";
import { EncoderLayerModel } from "./encoder-model.js";
import { GptModel } from "./gpt-model.js";
import { loadModel } from "./load-model.js";
import { modelCase, maxDiff } from "./test-cases.js";
import { ModelInputError } from "./token-ids.js";

const executors = [createCpuExecutor()];

describe("loadModel: GPT-2 family", () => {
  it("nanoGPT's state_dict (tied lm_head saved twice) gives PyTorch's logits and loss", async () => {
    const c = modelCase("nanogpt-bias-l2");
    const model = loadModel(c.bytes, { config: { n_head: 4 }, executors });
    expect(model).toBeInstanceOf(GptModel);
    expect(model.description).toMatch(
      /nanoGPT layout .*2 layers, 4 heads, n_embd 32, vocab 50, block 16, biases, exact GELU, lm_head tied/,
    );
    const { logits, loss } = await (model as GptModel).run({ idx: c.inputs["idx"], targets: c.inputs["targets"] });
    expect(maxDiff(logits.data, c.expected.logits!.data)).toBeLessThan(1e-5);
    expect(Math.abs(loss!.data[0]! - c.expected.loss!)).toBeLessThan(1e-5);
    await model.dispose();
  });

  it("Hugging Face's GPT-2 layout (no transformer., Conv1D [in, out], no lm_head) loads as it is, with the tanh GELU", async () => {
    const c = modelCase("gpt2-hf-layout-l1");
    const model = loadModel(c.bytes, { config: { n_head: 2 }, executors }) as GptModel;
    expect(model.layout.kind).toBe("hf-gpt2");
    expect(model.config.gelu).toBe("tanh");
    const { logits } = await model.run({ idx: c.inputs["idx"] });
    expect(maxDiff(logits.data, c.expected.logits!.data)).toBeLessThan(1e-5);
    await model.dispose();
  });

  it("no biases, three layers; an untied head; attn.bias buffers of older HF files are ignored", async () => {
    for (const [name, heads] of [
      ["nanogpt-nobias-l3", 2],
      ["nanogpt-untied-l1", 2],
      ["gpt2-hf-layout-l2", 4],
      ["nanogpt-bias-l2-perturbed", 4],
    ] as const) {
      const c = modelCase(name);
      const model = loadModel(c.bytes, { config: { n_head: heads }, executors }) as GptModel;
      const { logits, loss } = await model.run({ idx: c.inputs["idx"], targets: c.inputs["targets"] });
      expect(maxDiff(logits.data, c.expected.logits!.data), name).toBeLessThan(2e-5);
      expect(Math.abs(loss!.data[0]! - c.expected.loss!), name).toBeLessThan(2e-5);
      if (name === "nanogpt-untied-l1") expect(model.config.tied).toBe(false);
      if (name === "nanogpt-nobias-l3") expect(model.graph().weights.some((w) => w.name.endsWith(".bias"))).toBe(false);
      await model.dispose();
    }
  });

  it("written back in the file's own layout, read again: the same keys, shapes and logits (PyTorch loads it as it loaded the original)", async () => {
    for (const [name, heads] of [
      ["nanogpt-bias-l2", 4],
      ["gpt2-hf-layout-l1", 2],
    ] as const) {
      const c = modelCase(name);
      const model = loadModel(c.bytes, { config: { n_head: heads }, executors }) as GptModel;
      const original = readSafetensors(c.bytes).tensors;
      const written = readSafetensors(writeSafetensors(model.stateDict())).tensors;
      expect([...written.keys()].sort()).toEqual(
        [...original.keys()].filter((k) => !/\.attn\.(bias|masked_bias)$/.test(k)).sort(),
      );
      for (const [k, t] of written) expect(maxDiff(t.data, original.get(k)!.data), k).toBe(0);
      const again = loadModel(writeSafetensors(model.stateDict()), {
        config: { n_head: heads },
        executors,
      }) as GptModel;
      const a = await model.run({ idx: c.inputs["idx"] });
      const b = await again.run({ idx: c.inputs["idx"] });
      expect(maxDiff(a.logits.data, b.logits.data)).toBe(0);
      await Promise.all([model.dispose(), again.dispose()]);
    }
  });

  it("new weights (a trainer's) reach the forward sessions and the generation decoders alike", async () => {
    const c = modelCase("nanogpt-bias-l2");
    const model = loadModel(c.bytes, { config: { n_head: 4 }, executors }) as GptModel;
    expect(await model.generateTokens([[13, 3, 22, 27]], { maxNewTokens: 3, greedy: true })).toEqual([
      [13, 3, 22, 27, 27, 27, 27],
    ]);
    // A zero embedding table (the head is tied): every logit 0, so greedy takes token 0.
    await model.setWeights({ ...model.weights, "transformer.wte.weight": Tensor.zeros([50, 32]) });
    expect(await model.generateTokens([[13, 3, 22, 27]], { maxNewTokens: 3, greedy: true })).toEqual([
      [13, 3, 22, 27, 0, 0, 0],
    ]);
    expect(Math.max(...(await model.run({ idx: [[1, 2]] })).logits.data.map(Math.abs))).toBe(0);
    await expect(model.setWeights({ "transformer.wte.weight": Tensor.zeros([50, 32]) })).rejects.toThrow(
      /weights\.transformer\.wpe\.weight: a weight of the model is missing/,
    );
    await model.dispose();
  });

  it("a checkpoint that does not fit names every missing, unexpected and mis-shaped key by the file's names, and the layout assumed", () => {
    const c = modelCase("gpt2-hf-layout-l2");
    const tensors = new Map(readSafetensors(c.bytes).tensors);
    for (const k of [...tensors.keys()]) if (k.startsWith("h.1.")) tensors.delete(k);
    tensors.set("h.0.mlp.c_fc.weight", Tensor.zeros([3, 3]));
    tensors.set("extra.weight", Tensor.zeros([2]));
    tensors.set("h.1.ln_1.weight", Tensor.zeros([32])); // block 1 exists, but only its ln_1
    const error = thrownError(() => loadModel(tensors, { config: { n_head: 4 } }));
    expect(error).toBeInstanceOf(StateDictError);
    const e = error as StateDictError;
    expect(e.message).toMatch(
      /^state_dict does not fit GPT-2 \/ nanoGPT \(Hugging Face GPT-2 layout \(Conv1D weights \[in, out\], keys without `transformer\.`/,
    );
    expect(e.missing).toEqual([
      "h.1.ln_1.bias",
      "h.1.attn.c_attn.weight",
      "h.1.attn.c_attn.bias",
      "h.1.attn.c_proj.weight",
      "h.1.attn.c_proj.bias",
      "h.1.ln_2.weight",
      "h.1.ln_2.bias",
      "h.1.mlp.c_fc.weight",
      "h.1.mlp.c_fc.bias",
      "h.1.mlp.c_proj.weight",
      "h.1.mlp.c_proj.bias",
    ]);
    for (const k of e.missing) expect(e.message).toContain(k); // every one listed, not "and 7 more"
    expect(e.unexpected).toEqual(["extra.weight"]);
    expect(e.misShaped).toEqual([{ key: "h.0.mlp.c_fc.weight", expected: "[32, 128]", got: "[3, 3]" }]);
  });

  it("what no shape says must come from the caller; what contradicts the shapes is an error naming both", () => {
    const c = modelCase("nanogpt-bias-l2");
    expect(() => loadModel(c.bytes)).toThrow(/config\.n_head: the number of heads is in no weight's shape: pass it/);
    expect(() => loadModel(c.bytes, { config: { n_head: 5 } })).toThrow(
      /config\.n_head: n_head must divide n_embd \(expected a divisor of 32, got 5\)/,
    );
    expect(() => loadModel(c.bytes, { config: { n_head: 4, n_layer: 3 } })).toThrow(
      /config\.n_layer: disagrees with the checkpoint .*expected 2, got 3/,
    );
    expect(() => loadModel(c.bytes, { config: { n_head: 4, bias: false } })).toThrow(ModelConfigError);
    expect(() => loadModel(c.bytes, { config: { n_head: 4, n_heads: 4 } as never })).toThrow(
      /config\.n_heads: unknown GPT config field/,
    );
    expect(() => loadModel(c.bytes, { family: "mamba" as never })).toThrow(/options\.family: unknown model family/);
    expect(() => loadModel(new Map([["foo.weight", Tensor.zeros([2])]]))).toThrow(
      /no model family recognised by its keys .*foo\.weight/,
    );
    const untied = modelCase("nanogpt-untied-l1");
    expect(() => loadModel(untied.bytes, { config: { n_head: 2 }, tie: true })).toThrow(
      /options\.tie: lm_head\.weight differs from wte\.weight/,
    );
  });

  it("bad ids are typed errors before anything runs: floats, out of the vocabulary, longer than the block size", async () => {
    const c = modelCase("nanogpt-bias-l2");
    const model = loadModel(c.bytes, { config: { n_head: 4 }, executors }) as GptModel;
    await expect(model.run({ idx: Tensor.from([1, 2], [1, 2]) })).rejects.toThrow(
      /idx: token ids must be int32 \(expected an int32 tensor \[B, T\], got float32 \[1, 2\]\)/,
    );
    await expect(model.run({ idx: [[1, 50]] })).rejects.toThrow(
      /idx\[0\]\[1\]: token id outside the vocabulary \(expected an integer in \[0, 50\), got 50\)/,
    );
    await expect(model.run({ idx: [Array.from({ length: 17 }, () => 1)] })).rejects.toThrow(
      /idx: 17 positions are more than the model's block size \(expected T <= 16/,
    );
    await expect(model.run({ idx: [[1, 2]], targets: [[1]] })).rejects.toThrow(ModelInputError);
    await expect(model.run({ idx: [[1.5]] })).rejects.toThrow(/a token id must be an integer/);
    await expect(model.run({ idx: [[1, 2]], targets: [[1, -2]] })).rejects.toThrow(
      /targets\[0\]\[1\]: token id outside the vocabulary \(expected an integer in \[0, 50\) or -1 \(ignored\), got -2\)/,
    );
    // The session is still usable.
    expect((await model.run({ idx: [[1, 2, 3]] })).logits.shape).toEqual([1, 3, 50]);
    await model.dispose();
  });

  it("a target of -1 is skipped by the loss, as nanoGPT's ignore_index=-1", async () => {
    const c = modelCase("nanogpt-bias-l2");
    const model = loadModel(c.bytes, { config: { n_head: 4 }, executors }) as GptModel;
    const both = await model.run({ idx: [[1, 2, 3]], targets: [[4, -1, 6]] });
    const first = await model.run({ idx: [[1, 2, 3]], targets: [[4, 4, 6]] });
    const logits = both.logits.toFloat32Array();
    // The mean of positions 0 and 2 only: log-sum-exp minus the target's logit, by hand.
    const nll = (pos: number, target: number) => {
      const row = logits.subarray(pos * 50, pos * 50 + 50);
      const max = Math.max(...row);
      return Math.log(row.reduce((a, v) => a + Math.exp(v - max), 0)) + max - row[target]!;
    };
    const loss = (t: { loss: Tensor }) => t.loss.toFloat32Array()[0]!;
    expect(loss(both)).toBeCloseTo((nll(0, 4) + nll(2, 6)) / 2, 5);
    expect(loss(both)).not.toBeCloseTo(loss(first), 5);
    await model.dispose();
  });
});

describe("loadModel: torch.nn.TransformerEncoderLayer", () => {
  it("norm_first, GELU, batch_first with a bool causal mask and a bool key padding mask: PyTorch's output", async () => {
    const c = modelCase("torch-encoder-layer-normfirst-gelu");
    const model = loadModel(c.bytes, {
      config: { nhead: 4, activation: "gelu", batch_first: true, norm_first: true },
      executors,
    });
    expect(model).toBeInstanceOf(EncoderLayerModel);
    const { output } = await (model as EncoderLayerModel).run({
      src: c.inputs["src"],
      src_mask: c.inputs["src_mask_true_is_masked"],
      src_key_padding_mask: c.inputs["src_key_padding_mask_true_is_pad"],
    });
    expect(maxDiff(output.data, c.expected.output!.data)).toBeLessThan(2e-5);
    await model.dispose();
  });

  it("post-norm ReLU, sequence-first [T, B, E], a float additive mask; no masks with layer_norm_eps 1e-6", async () => {
    const relu = modelCase("torch-encoder-layer-postnorm-relu");
    const a = loadModel(relu.bytes, { config: { nhead: 3 }, executors }) as EncoderLayerModel; // PyTorch's defaults: relu, post-norm, seq-first
    const outA = await a.run({
      src: relu.inputs["src"],
      src_mask: relu.inputs["src_mask_additive"],
      src_key_padding_mask: relu.inputs["src_key_padding_mask_true_is_pad"],
    });
    expect(maxDiff(outA.output.data, relu.expected.output!.data)).toBeLessThan(2e-5);
    const nomask = modelCase("torch-encoder-layer-nomask");
    const b = loadModel(nomask.bytes, {
      config: { nhead: 2, activation: "gelu", batch_first: true, norm_first: true, layer_norm_eps: 1e-6 },
      executors,
    }) as EncoderLayerModel;
    const outB = await b.run({ src: nomask.inputs["src"] });
    expect(maxDiff(outB.output.data, nomask.expected.output!.data)).toBeLessThan(2e-5);
    await Promise.all([a.dispose(), b.dispose()]);
  });

  it("masks as PyTorch takes them: booleans, int32 (True/1 = masked or padded), additive floats with −∞", async () => {
    const c = modelCase("torch-encoder-layer-normfirst-gelu");
    const model = loadModel(c.bytes, {
      config: { nhead: 4, activation: "gelu", batch_first: true, norm_first: true },
      executors,
    }) as EncoderLayerModel;
    const T = 7;
    const boolMask = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => j > i));
    const additive = Tensor.from(
      boolMask.flat().map((m) => (m ? -Infinity : 0)),
      [T, T],
    );
    const pad = [
      [false, false, false, false, false, false, false],
      [false, false, false, false, false, true, true],
    ];
    const a = await model.run({ src: c.inputs["src"], src_mask: boolMask, src_key_padding_mask: pad });
    const b = await model.run({
      src: c.inputs["src"],
      src_mask: additive,
      src_key_padding_mask: c.inputs["src_key_padding_mask_true_is_pad"],
    });
    expect(maxDiff(a.output.data, c.expected.output!.data)).toBeLessThan(2e-5);
    expect(maxDiff(b.output.data, c.expected.output!.data)).toBeLessThan(2e-5);
    await expect(
      model.run({ src: c.inputs["src"], src_mask: Tensor.from(new Array(T * T).fill(Number.NaN), [T, T]) }),
    ).rejects.toThrow(/src_mask\[0\]\[0\]: an additive mask entry must be a number or −∞/);
    await expect(
      model.run({ src: c.inputs["src"], src_mask: Tensor.int32(new Array(9).fill(0), [3, 3]) }),
    ).rejects.toThrow(/src_mask: the attention mask is \[T, T\].*expected \[7, 7\], got \[3, 3\]/);
    await expect(
      model.run({ src: c.inputs["src"], src_key_padding_mask: Tensor.from(new Array(14).fill(0.5), [2, 7]) }),
    ).rejects.toThrow(/src_key_padding_mask\[0\]\[0\]: a float key padding mask is additive/);
    await expect(model.run({ src: Tensor.zeros([2, 7, 16]) })).rejects.toThrow(
      /src: the layer's input \(expected a float32 tensor \[B, T, 32\]/,
    );
    await model.dispose();
  });

  it("constructor arguments it does not take are refused by name", () => {
    const c = modelCase("torch-encoder-layer-normfirst-gelu");
    expect(() => loadModel(c.bytes, { config: { nhead: 4, activation: "silu" } })).toThrow(
      /config\.activation: unsupported activation/,
    );
    expect(() => loadModel(c.bytes, { config: { nhead: 4, kdim: 3 } as never })).toThrow(
      /config\.kdim: not an argument of torch\.nn\.TransformerEncoderLayer/,
    );
    expect(() => loadModel(c.bytes, { config: { nhead: 4, d_model: 16 } })).toThrow(
      /config\.d_model: disagrees with the checkpoint/,
    );
    expect(() => loadModel(c.bytes, { config: { nhead: 4 }, tie: true })).toThrow(
      /options\.tie: only GPT-2 models have a head to tie/,
    );
  });
});
