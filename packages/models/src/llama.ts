// Hugging Face's LlamaForCausalLM as graph nodes, named as its state_dict is:
//   x = model.embed_tokens(idx)
//   per layer i (model.layers.i): h = x + o_proj(attn(input_layernorm(x))), attn with RoPE (rotate_half, base
//   rope_theta) on q and k and grouped-query heads (k_proj/v_proj have num_key_value_heads · head_dim rows);
//   out = h + down_proj(silu(gate_proj(n)) · up_proj(n)), n = post_attention_layernorm(h)
//   logits = lm_head(model.norm(x)), lm_head tied to model.embed_tokens or its own. No biases anywhere.
// There is no position embedding: positions enter only through RoPE, which in a decode graph starts at the decoder's
// absolute position N, so a KV-cache decoder runs the same graph one token at a time.
import { addAttention, type StandardWeight } from "@attngraph/attention";
import type { GraphBuilder, OpGraph, Ref } from "@attngraph/graph";
import { addLinear } from "@attngraph/nn";
import type { LlamaConfig } from "./llama-config.js";
import { lmGraph, type LmGraphOptions } from "./lm-graph.js";

/** The target that the loss skips: Hugging Face's CrossEntropyLoss(ignore_index=-100). */
export const LLAMA_IGNORE_INDEX = -100;

/** Hugging Face's names of the attention's weights inside `self_attn`. */
const LLAMA_ATTENTION_WEIGHTS: Readonly<Partial<Record<StandardWeight, string>>> = {
  W_query: "q_proj.weight",
  W_key: "k_proj.weight",
  W_value: "v_proj.weight",
  out_proj: "o_proj.weight",
};

/** `loss`: Hugging Face's cross-entropy on labels already shifted (ignore_index −100); `decode`: RoPE from the decoder's N. */
export type LlamaGraphOptions = LmGraphOptions;

/**
 * The Llama graph: input `idx` [B, T] int32 → output `logits` [B, T, vocab] (and `loss` with options.loss). Node and
 * weight names follow the modules (`model.layers.0.self_attn.weights` is layer 0's attention pattern).
 */
export function llamaGraph(c: LlamaConfig, options: LlamaGraphOptions = {}): OpGraph {
  const frame = { embedding: "model.embed_tokens", width: c.hiddenSize, ignoreIndex: LLAMA_IGNORE_INDEX };
  return lmGraph(c, frame, options, (b, tokens) => {
    let x = tokens; // [B, T, E]
    for (let i = 0; i < c.numLayers; i++) x = addLlamaLayer(b, x, c, `model.layers.${i}`, options.decode === true);
    return addRmsNorm(b, x, "model.norm", c.rmsNormEps);
  });
}

/** LlamaRMSNorm under `name` with its weight `<name>.weight` [E]. */
function addRmsNorm(b: GraphBuilder, x: Ref, name: string, eps: number): Ref {
  const e = b.shapeOf(x).at(-1) as number;
  return b.add("rms-norm", name, { x, weight: b.weight(`${name}.weight`, [e]) }, { eps });
}

/** One LlamaDecoderLayer under `p` (model.layers.i): pre-norm attention and gated MLP, each added to the residual. */
function addLlamaLayer(b: GraphBuilder, x: Ref, c: LlamaConfig, p: string, decode: boolean): Ref {
  const n1 = addRmsNorm(b, x, `${p}.input_layernorm`, c.rmsNormEps);
  const attn = addAttention(
    b,
    n1,
    {
      dIn: c.hiddenSize,
      dOut: c.hiddenSize,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      causal: true,
      qkvBias: false,
      outBias: false,
      outProj: true,
    },
    {
      prefix: `${p}.self_attn`,
      outputName: `${p}.self_attn`,
      weightNames: LLAMA_ATTENTION_WEIGHTS,
      position: { kind: "rope", base: c.ropeTheta },
      ...(decode ? { decode: true } : {}),
    },
  ).output;
  const h = b.add("add", `${p}.residual`, { a: x, b: attn }); // [B, T, E]
  const n2 = addRmsNorm(b, h, `${p}.post_attention_layernorm`, c.rmsNormEps);
  const gate = b.add("silu", `${p}.mlp.act`, {
    x: addLinear(b, n2, `${p}.mlp.gate_proj`, c.intermediateSize, { bias: false }),
  }); // [B, T, I]
  const up = addLinear(b, n2, `${p}.mlp.up_proj`, c.intermediateSize, { bias: false }); // [B, T, I]
  const gated = b.add("mul", `${p}.mlp.gated`, { a: gate, b: up });
  const down = addLinear(b, gated, `${p}.mlp.down_proj`, c.hiddenSize, { bias: false }); // [B, T, E]
  return b.add("add", `${p}.output`, { a: h, b: down });
}
