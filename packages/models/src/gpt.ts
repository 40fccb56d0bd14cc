// nanoGPT's GPT (karpathy/nanoGPT model.py) as graph nodes, named as its state_dict is:
//   x = transformer.wte(idx) + transformer.wpe(positions)
//   per block i (transformer.h.i): x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), attn = c_attn (one Linear to q, k, v)
//   → causal attention → c_proj, mlp = c_fc → GELU → c_proj
//   logits = lm_head(ln_f(x)), lm_head tied to transformer.wte (the same weight) or its own.
// Hugging Face's GPT-2 is the same network under other names and layouts; gpt-layout.ts maps its files onto these.
// Positions come from the graph (a position-embedding node reading rows offset … offset + T − 1 of wpe), so nobody
// feeds position ids; in a decode graph the offset is the absolute position N the decoder binds.
import { addAttention, type StandardWeight } from "@attngraph/attention";
import { DECODE_DIMS, type GraphBuilder, type OpGraph, type Ref } from "@attngraph/graph";
import { addLayerNorm, addLinear } from "@attngraph/nn";
import type { GptConfig } from "./gpt-config.js";
import { lmGraph, type LmGraphOptions } from "./lm-graph.js";

/** The target that the loss skips: nanoGPT's F.cross_entropy(…, ignore_index=-1). */
export const GPT_IGNORE_INDEX = -1;

/** nanoGPT's names of the attention's weights inside `attn`. */
const GPT_ATTENTION_WEIGHTS: Readonly<Partial<Record<StandardWeight, string>>> = {
  W_qkv: "c_attn.weight",
  b_qkv: "c_attn.bias",
  out_proj: "c_proj.weight",
  out_bias: "c_proj.bias",
};

/** `loss`: nanoGPT's cross-entropy (ignore_index −1); `decode`: positions from the decoder's N. */
export type GptGraphOptions = LmGraphOptions;

/**
 * The GPT graph: input `idx` [B, T] int32 (T ≤ block_size) → output `logits` [B, T, vocab] (and `loss` with
 * options.loss). Node names follow the modules (`transformer.h.0.attn.weights` is block 0's attention pattern).
 */
export function gptGraph(c: GptConfig, options: GptGraphOptions = {}): OpGraph {
  const frame = { embedding: "transformer.wte", width: c.nEmbd, ignoreIndex: GPT_IGNORE_INDEX };
  return lmGraph(c, frame, options, (b, tokens, idx) => {
    const wpe = b.weight("transformer.wpe.weight", [c.blockSize, c.nEmbd]);
    const offset = options.decode ? DECODE_DIMS.position : 0;
    const positions = b.add("position-embedding", "transformer.wpe", { ids: idx, weight: wpe }, { offset }); // [T, E]
    let x = b.add("add", "transformer.embed", { a: tokens, b: positions }); // [B, T, E]
    for (let i = 0; i < c.nLayer; i++) x = addGptBlock(b, x, c, `transformer.h.${i}`, options.decode === true);
    return addLayerNorm(b, x, "transformer.ln_f", { eps: c.layerNormEps, bias: c.bias });
  });
}

/** One nanoGPT Block under `p` (transformer.h.i): pre-norm attention and MLP, each added to the residual stream. */
function addGptBlock(b: GraphBuilder, x: Ref, c: GptConfig, p: string, decode: boolean): Ref {
  const ln1 = addLayerNorm(b, x, `${p}.ln_1`, { eps: c.layerNormEps, bias: c.bias });
  const attn = addAttention(
    b,
    ln1,
    { dIn: c.nEmbd, dOut: c.nEmbd, numHeads: c.nHead, causal: true, qkvBias: c.bias, outBias: c.bias, outProj: true },
    {
      prefix: `${p}.attn`,
      outputName: `${p}.attn`,
      fusedQkv: true,
      weightNames: GPT_ATTENTION_WEIGHTS,
      ...(decode ? { decode: true } : {}),
    },
  ).output;
  const mid = b.add("add", `${p}.residual`, { a: x, b: attn });
  const ln2 = addLayerNorm(b, mid, `${p}.ln_2`, { eps: c.layerNormEps, bias: c.bias });
  const fc = addLinear(b, ln2, `${p}.mlp.c_fc`, 4 * c.nEmbd, { bias: c.bias });
  const gelu = b.add("gelu", `${p}.mlp.gelu`, { x: fc }, { approximate: c.gelu === "tanh" ? "tanh" : "none" });
  const proj = addLinear(b, gelu, `${p}.mlp.c_proj`, c.nEmbd, { bias: c.bias });
  return b.add("add", `${p}.output`, { a: mid, b: proj });
}
