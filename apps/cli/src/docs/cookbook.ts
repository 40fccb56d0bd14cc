// Renders docs/cookbook.md: each attention variant one builder call away, with the plan `explain()` prints for it.
// The doc is generated so that it cannot drift from the builders; a test compares the file with this output.
import { buildAttention, type AttentionConfigInput, type AttentionOptions } from "@attngraph/attention";
import { grad } from "@attngraph/autodiff";
import type { OpGraph } from "@attngraph/graph";
import { simpleTransformer, transformerBlock } from "@attngraph/nn";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { explain, lower } from "@attngraph/scheduler";

interface Recipe {
  readonly title: string;
  readonly about: string;
  readonly call: string;
  readonly config: AttentionConfigInput;
  readonly options?: AttentionOptions;
  /** A graph from another builder (@attngraph/nn); `config` and `options` are then unused. */
  readonly graph?: () => OpGraph;
}

export const recipes: readonly Recipe[] = [
  {
    title: "Single-head self-attention",
    about: "One head, no mask, no output projection: the first worked example.",
    call: `selfAttention({ dIn: 4, dOut: 4 })`,
    config: { dIn: 4, dOut: 4, numHeads: 1, outProj: false },
  },
  {
    title: "Causal attention",
    about: "Query i sees keys j <= i; masked scores become -inf before the softmax.",
    call: `causalAttention({ dIn: 4, dOut: 4 })`,
    config: { dIn: 4, dOut: 4, numHeads: 1, causal: true, outProj: false },
  },
  {
    title: "Multi-head attention with an output projection",
    about: "Separate Q/K/V projections, heads split and merged by views, out-proj with bias.",
    call: `multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true })`,
    config: { dIn: 8, dOut: 8, numHeads: 2, causal: true },
  },
  {
    title: "Fused QKV projection",
    about: "One matmul with W_qkv [E + 2·Ekv, dIn]; queries/keys/values are slices (views) of its output.",
    call: `fusedQkvAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true })`,
    config: { dIn: 8, dOut: 8, numHeads: 2, causal: true },
    options: { fusedQkv: true },
  },
  {
    title: "Grouped-query attention (GQA) and multi-query attention (MQA)",
    about:
      "numKvHeads < numHeads: each key/value head serves numHeads/numKvHeads consecutive query heads, indexed by the score and weighted-sum kernels, never repeated in memory. numKvHeads: 1 is MQA.",
    call: `multiHeadAttention({ dIn: 16, dOut: 16, numHeads: 4, numKvHeads: 2, causal: true })`,
    config: { dIn: 16, dOut: 16, numHeads: 4, numKvHeads: 2, causal: true },
  },
  {
    title: "Cross-attention with a key padding mask",
    about:
      "Queries from x [B, T, dIn], keys and values from kv [B, S, dIn]; keyPaddingMask [B, S] hides padded keys (1 = padded).",
    call: `buildAttention({ dIn: 8, dOut: 8, numHeads: 2, cross: true }, { keyPaddingMask: true })`,
    config: { dIn: 8, dOut: 8, numHeads: 2, cross: true },
    options: { keyPaddingMask: true },
  },
  {
    title: "Sliding-window causal attention",
    about: "With causal, query i sees keys i - window < j <= i.",
    call: `multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true, window: 3 })`,
    config: { dIn: 8, dOut: 8, numHeads: 2, causal: true, window: 3 },
  },
  {
    title: "Attention dropout",
    about:
      "Dropout after the softmax; `weights` is its output. Identity unless built with `training: true`; the mask is a pure function of seed and element index, the same on every executor.",
    call: `multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, dropout: 0.1 }, { training: true, seed: 42 })`,
    config: { dIn: 8, dOut: 8, numHeads: 2, dropout: 0.1 },
    options: { training: true, seed: 42 },
  },
  {
    title: "ALiBi (attention with linear biases)",
    about:
      "A node `scores.alibi` between the raw `scores` and the mask adds slope_h · (j − i) to the scaled scores (Press et al.). " +
      "Slopes default to the paper's `get_slopes(H)` (2^(−8(h+1)/H) when H is a power of two); pass `slopes` for your own, one per query head. " +
      "ALiBi's bias is added after the scaling, softmax(q·kᵀ/√D + m·(j − i)), so the alibi node applies the score scale and the softmax runs with scale 1 " +
      "(a softmax scale would shrink the slopes too). `scores` stays the raw Q·Kᵀ; `masked` (scaled, biased, masked) is where TransformerLens hooks `hook_attn_scores`.",
    call: `multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { position: { kind: "alibi" } })`,
    config: { dIn: 8, dOut: 8, numHeads: 2, causal: true },
    options: { position: { kind: "alibi" } },
  },
  {
    title: "Rotary position embedding (RoPE)",
    about:
      "Nodes `q.rope` and `k.rope` rotate the split query and key heads before the score, so ⟨q_m, k_n⟩ depends only on m − n. " +
      "Split-half convention of GPT-NeoX, Llama and Hugging Face's `rotate_half`: dim i turns with dim i + r/2 by θ = p · base^(−2i/r), " +
      "not GPT-J's interleaved pairs (2i, 2i + 1); weights from a GPT-J-style checkpoint need their Q/K rows permuted first. " +
      "Options: `base` (10000), `rotaryDim` (even, ≤ D; dims past it pass through, as in GPT-NeoX's partial rotary), `positionOffset` (position of token 0, e.g. the cache length).",
    call: `multiHeadAttention({ dIn: 16, dOut: 16, numHeads: 2, causal: true }, { position: { kind: "rope", rotaryDim: 4 } })`,
    config: { dIn: 16, dOut: 16, numHeads: 2, causal: true },
    options: { position: { kind: "rope", rotaryDim: 4 } },
  },
  {
    title: "A user mask: 0/1, or an additive bias",
    about:
      '`userMask: "mask"` adds an input `mask` [T, S] of 0/1 where 0 hides the key (PyTorch `masked_fill(mask == 0, -inf)`, the worked example\'s convention); ' +
      'it composes with causal, window and key padding by "or", and a row it hides completely gives zero weights. `userMask: "bias"` adds a float `bias` [T, S] ' +
      "added to the scaled scores (PyTorch SDPA's float `attn_mask`, −∞ hides), so the mask node applies the scale and the softmax gets 1. " +
      "Masks of [B, T, S] or [B, H, T, S] (dims of 1 broadcast) go in through `addAttention`'s `maskRef`/`biasRef`. The fused attention kernels take " +
      "causal, window and key padding only, so a user mask keeps the chain unfused, and the fusion pass says so.",
    call: `multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2 }, { userMask: "mask" })`,
    config: { dIn: 8, dOut: 8, numHeads: 2 },
    options: { userMask: "mask" },
  },
  {
    title: "Pre-norm transformer block",
    about:
      "`transformerBlock` from `@attngraph/nn`: the worked example's block, ln1 → multi-head attention (fused `qkv_proj`, a user mask input) → residual → ln2 → " +
      "GELU MLP → residual. Node names are the example's (`ln1`, `attention.weights`, `attention`, `residual`, `ln2`, `mlp.hidden`, `mlp.gelu`, `mlp`, `output`), " +
      "weight names its `state_dict` keys, so `loadStateDict(graph, stateDict)` (or a `.safetensors` file through `readSafetensors`) loads a PyTorch checkpoint as it is.",
    call: `transformerBlock({ embedDim: 16, nHeads: 4 }, { mask: true })`,
    config: { dIn: 16, dOut: 16, numHeads: 4 },
    graph: () => transformerBlock({ embedDim: 16, nHeads: 4 }, { mask: true }),
  },
  {
    title: "SimpleTransformer with its loss (the copy-task model)",
    about:
      "`simpleTransformer` from `@attngraph/nn`: int32 `tokens` [B, seqLen] → `embed` (embedding) + `pos_embed` (an add that broadcasts over the batch) → " +
      "a causal pre-norm block named `transformer` → logits `output` [B, T, V]; with `loss: true`, int32 `targets` and a `loss` node (mean cross-entropy). " +
      "Token ids are int32 tensors (`Tensor.int32`): a float32 tensor of ids is an error, and an id outside the vocabulary is an error naming its position.",
    call: `simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 }, { loss: true })`,
    config: { dIn: 32, dOut: 32, numHeads: 4 },
    graph: () => simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 }, { loss: true }),
  },
  {
    title: "Gradients of causal multi-head attention",
    about:
      "`grad` from `@attngraph/autodiff` returns the same graph plus its backward nodes, each gradient named `<value>.grad` (tappable). The output is not a " +
      "scalar, so its upstream gradient is an input `output.grad` (L = sum(output ⊙ output.grad)); a scalar loss such as the model's `loss` needs none. " +
      "The backward ops: `linear-weight-grad` (Σ gradᵀ·x), `sum-to` (bias and key/value head groups), `softmax-grad` (from the saved weights), " +
      "`mask-grad` (0 where the forward output is −∞); queries/keys/values gradients reuse score and weighted-sum on transposed views, and the input's " +
      "three contributions are summed by `add` nodes. When nothing taps the [L, S] values, the scheduler runs the chain and this backward fused " +
      "(`attention`, `attention-lse`, one `attention-grad` per gradient: FlashAttention style, no [L, S] kept), as the plan below shows.",
    call: `grad(multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }), { loss: "output", wrt: ["x", "W_query", "W_key", "W_value", "out_proj", "out_bias"] }).graph`,
    config: { dIn: 8, dOut: 8, numHeads: 2, causal: true },
    graph: () =>
      grad(buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }), {
        loss: "output",
        wrt: ["x", "W_query", "W_key", "W_value", "out_proj", "out_bias"],
      }).graph,
  },
];

export function renderCookbook(): string {
  const parts = [
    "# Cookbook: attention variants and blocks",
    "",
    "<!-- Generated by `pnpm gen:docs` from apps/cli/src/docs/cookbook.ts; a test fails when this file is stale. -->",
    "",
    "Each variant is one builder call from `@attngraph/attention`; below it, the plan that `session.explain()` prints",
    "for it on the cpu executor. Shape legend: B batch, H heads, Hkv kv heads, L query length (dim `T`), S key length",
    "(`T`, or `S` in cross-attention), D head dim, E model dim. To run one:",
    "",
    "```ts",
    'import { attentionWeights, multiHeadAttention } from "@attngraph/attention";',
    'import { createCpuExecutor } from "@attngraph/executor-cpu";',
    'import { compile } from "@attngraph/runtime";',
    "",
    "const session = await compile(multiHeadAttention(config), { executors: [createCpuExecutor()], weights: attentionWeights(config, raw) });",
    "console.log(session.explain());",
    'session.tap("weights").subscribe(({ tensor }) => console.log(tensor.toString()));',
    "const { output } = await session.run({ x });",
    "```",
  ];
  for (const r of recipes) {
    const plan = lower(r.graph ? r.graph() : buildAttention(r.config, r.options ?? {}), {
      executors: [createCpuExecutor()],
    });
    parts.push("", `## ${r.title}`, "", r.about, "", "```ts", r.call, "```", "", "```", explain(plan), "```");
  }
  return `${parts.join("\n")}\n`;
}
