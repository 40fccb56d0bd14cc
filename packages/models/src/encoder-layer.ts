// torch.nn.TransformerEncoderLayer as graph nodes, named as its state_dict is (self_attn.in_proj_weight [3E, E],
// self_attn.out_proj.*, linear1.*, linear2.*, norm1.*, norm2.*):
//   norm_first:  x = x + sa(norm1(x));  x = x + ff(norm2(x))
//   otherwise:   x = norm1(x + sa(x));  x = norm2(x + ff(x))
// sa = multi-head self-attention (one packed in-projection, scale 1/√head_dim), ff = linear2(act(linear1(x))).
// Masks arrive in attngraph's forms (mask.ts converts PyTorch's): `src_mask` [T, T] 0/1 (0 hides) or `src_bias`
// [T, T] additive, `src_key_padding_mask` [B, T] (1 = padded key).
import { addAttention, type StandardWeight } from "@attngraph/attention";
import { GraphBuilder, type OpGraph, type Ref } from "@attngraph/graph";
import { addLayerNorm, addLinear } from "@attngraph/nn";
import type { EncoderLayerConfig } from "./encoder-config.js";

/** nn.MultiheadAttention's names of its packed projection and output projection. */
export const TORCH_MHA_WEIGHTS: Readonly<Partial<Record<StandardWeight, string>>> = {
  W_qkv: "in_proj_weight",
  b_qkv: "in_proj_bias",
  out_proj: "out_proj.weight",
  out_bias: "out_proj.bias",
};

/** Which mask inputs a graph takes (one graph per combination a caller uses). */
export interface EncoderMasks {
  readonly mask?: "mask" | "bias";
  readonly keyPadding?: boolean;
}

/**
 * The layer's graph: input `src` ([B, T, E] with batch_first, else [T, B, E] as PyTorch's default) and the masks
 * asked for → output `output`, shaped like src. Nodes: `self_attn.*` (its `self_attn.weights` [B, H, T, T]), `sa`,
 * `ff.hidden`, `ff.act`, `ff`, and the norms.
 */
export function encoderLayerGraph(c: EncoderLayerConfig, masks: EncoderMasks = {}): OpGraph {
  const b = new GraphBuilder();
  const E = c.dModel;
  const src = b.input("src", c.batchFirst ? ["B", "T", E] : ["T", "B", E]);
  const mask = masks.mask ? b.input(masks.mask === "mask" ? "src_mask" : "src_bias", ["T", "T"]) : undefined;
  const pad = masks.keyPadding ? b.input("src_key_padding_mask", ["B", "T"]) : undefined;
  // Sequence-first input: the attention reads [B, T, E], so the layer works batch-first inside and turns back at the end.
  let x: Ref = c.batchFirst ? src : b.add("transpose", "src.batch_first", { x: src }, { perm: [1, 0, 2] });
  const ln = (y: Ref, name: string) => addLayerNorm(b, y, name, { eps: c.layerNormEps, bias: c.bias });
  const sa = (y: Ref) =>
    addAttention(
      b,
      y,
      { dIn: E, dOut: E, numHeads: c.nHead, causal: false, qkvBias: c.bias, outBias: c.bias, outProj: true },
      {
        prefix: "self_attn",
        outputName: "sa",
        fusedQkv: true,
        weightNames: TORCH_MHA_WEIGHTS,
        ...(mask ? (masks.mask === "mask" ? { maskRef: mask } : { biasRef: mask }) : {}),
        ...(pad ? { keyPaddingMaskRef: pad } : {}),
      },
    ).output;
  const ff = (y: Ref) => {
    const h = addLinear(b, y, "ff.hidden", c.dimFeedforward, { weights: "linear1", bias: c.bias });
    const a =
      c.activation === "gelu"
        ? b.add("gelu", "ff.act", { x: h }, { approximate: "none" })
        : b.add("relu", "ff.act", { x: h });
    return addLinear(b, a, "ff", E, { weights: "linear2", bias: c.bias });
  };
  if (c.normFirst) {
    x = b.add("add", "sa.residual", { a: x, b: sa(ln(x, "norm1")) });
    x = b.add("add", "ff.residual", { a: x, b: ff(ln(x, "norm2")) });
  } else {
    x = ln(b.add("add", "sa.residual", { a: x, b: sa(x) }), "norm1");
    x = ln(b.add("add", "ff.residual", { a: x, b: ff(x) }), "norm2");
  }
  const out = c.batchFirst ? x : b.add("transpose", "output.seq_first", { x }, { perm: [1, 0, 2] });
  return b
    .output(b.add("reshape", "output", { x: out }, { shape: c.batchFirst ? ["B", "T", E] : ["T", "B", E] }))
    .build();
}
