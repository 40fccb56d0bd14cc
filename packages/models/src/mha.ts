// torch.nn.MultiheadAttention as graph nodes, named as its state_dict is: `in_proj_weight` [3E, E] (or
// `q_proj_weight` [E, E], `k_proj_weight` [E, kdim], `v_proj_weight` [E, vdim] when kdim or vdim differs from E),
// `in_proj_bias` [3E], `out_proj.weight` [E, E], `out_proj.bias` [E]. forward(query, key, value) computes
//   softmax(q·kᵀ/√D (+ attn_mask) with hidden keys −∞) · v per head, heads merged, then out_proj.
// Two shapes of graph, as PyTorch itself has two paths:
// - self-attention (`query is key is value`) with packed weights: one input `query`, one [3E, E] matmul — the
//   attention builder's fused-QKV block with TORCH_MHA_WEIGHTS, the one the encoder layer uses;
// - otherwise three inputs `query`, `key`, `value`: the builder's single `kv` input cannot take a key and a value that
//   are different tensors (or of different widths), so the nodes are built here, the same kinds build.ts adds. A packed
//   in_proj_weight is then sliced into its q, k and v rows (views), as PyTorch's `_in_projection_packed` chunks it.
// Shape legend: B batch, H heads, L query length, S key length, D = E / H head dim, E embed_dim.
import { addAttention } from "@attngraph/attention";
import { GraphBuilder, type OpGraph, type Ref } from "@attngraph/graph";
import { TORCH_MHA_WEIGHTS } from "./encoder-layer.js";
import type { MhaConfig } from "./mha-config.js";

/** Which graph a forward call needs (one per combination a caller uses). */
export interface MhaGraphOptions {
  /** query, key and value are one tensor: one input `query`. */
  readonly selfAttention?: boolean;
  /** PyTorch's attn_mask turned into attngraph's: input `attn_mask` [L, S] 0/1 (0 hides), or `attn_bias` additive. */
  readonly mask?: "mask" | "bias";
  /** Input `key_padding_mask` [B, S], 1 = padded key. */
  readonly keyPadding?: boolean;
  /** is_causal: query i sees keys j <= i (top-left, as PyTorch's causal mask). */
  readonly causal?: boolean;
  /** A second output `attn_output_weights` [B, H, L, S], per head (the model averages on the host). */
  readonly needWeights?: boolean;
}

/**
 * The module's graph: inputs `query` ([B, L, E] with batch_first, else [L, B, E]), `key` [.., S, kdim] and `value`
 * [.., S, vdim] (only `query` for self-attention), the masks asked for → `attn_output` shaped like query, and with
 * needWeights `attn_output_weights` [B, H, L, S]. Nodes: queries, keys, values, scores, weights, context.
 */
export function mhaGraph(c: MhaConfig, o: MhaGraphOptions = {}): OpGraph {
  const b = new GraphBuilder();
  const E = c.embedDim;
  const H = c.numHeads;
  const S = o.selfAttention ? "L" : "S";
  const seq = (name: string, len: string, width: number) =>
    b.input(name, c.batchFirst ? ["B", len, width] : [len, "B", width]);
  // Sequence-first inputs: the attention nodes read [B, L, E], so the graph works batch-first inside.
  const batchFirst = (x: Ref, name: string) =>
    c.batchFirst ? x : b.add("transpose", `${name}.batch_first`, { x }, { perm: [1, 0, 2] });
  const query = batchFirst(seq("query", "L", E), "query"); // [B, L, E]
  const mask = o.mask ? b.input(o.mask === "mask" ? "attn_mask" : "attn_bias", ["L", S]) : undefined;
  const pad = o.keyPadding ? b.input("key_padding_mask", ["B", S]) : undefined;
  const outName = c.batchFirst ? "attn_output" : "attn_output.batch_first";
  let out: Ref, weights: Ref;
  if (o.selfAttention && c.packed) {
    const refs = addAttention(
      b,
      query,
      { dIn: E, dOut: E, numHeads: H, causal: o.causal ?? false, qkvBias: c.bias, outBias: c.bias, outProj: true },
      {
        outputName: outName,
        fusedQkv: true,
        weightNames: TORCH_MHA_WEIGHTS,
        ...(mask ? (o.mask === "mask" ? { maskRef: mask } : { biasRef: mask }) : {}),
        ...(pad ? { keyPaddingMaskRef: pad } : {}),
      },
    );
    out = refs.output;
    weights = refs.weights;
  } else {
    const key = o.selfAttention ? query : batchFirst(seq("key", "S", c.kdim), "key"); // [B, S, kdim]
    const value = o.selfAttention ? query : batchFirst(seq("value", "S", c.vdim), "value"); // [B, S, vdim]
    ({ out, weights } = attentionNodes(b, c, o, { query, key, value, mask, pad, outName }));
  }
  // Sequence-first: back to [L, B, E] (the reshape gives the output its own dense layout, as the encoder layer's).
  const attnOutput = c.batchFirst
    ? out
    : b.add(
        "reshape",
        "attn_output",
        { x: b.add("transpose", "attn_output.seq_first", { x: out }, { perm: [1, 0, 2] }) },
        { shape: ["L", "B", E] },
      );
  if (!o.needWeights) return b.output(attnOutput).build();
  return b
    .output(attnOutput, b.add("reshape", "attn_output_weights", { x: weights }, { shape: ["B", H, "L", S] }))
    .build();
}

interface Sources {
  readonly query: Ref;
  readonly key: Ref;
  readonly value: Ref;
  readonly mask: Ref | undefined;
  readonly pad: Ref | undefined;
  readonly outName: string;
}

/** The attention nodes on three sources, with the module's weight names (build.ts's node kinds, one by one). */
function attentionNodes(b: GraphBuilder, c: MhaConfig, o: MhaGraphOptions, s: Sources): { out: Ref; weights: Ref } {
  const E = c.embedDim;
  const H = c.numHeads;
  const D = E / H;
  const rows = (w: Ref, part: string, i: number) =>
    b.add("slice", `in_proj_${part}`, { x: w }, { axis: 0, start: i * E, size: E });
  let wq: Ref, wk: Ref, wv: Ref;
  if (c.packed) {
    const w = b.weight("in_proj_weight", [3 * E, E]);
    [wq, wk, wv] = [rows(w, "weight.q", 0), rows(w, "weight.k", 1), rows(w, "weight.v", 2)]; // [E, E] each
  } else {
    [wq, wk, wv] = [
      b.weight("q_proj_weight", [E, E]),
      b.weight("k_proj_weight", [E, c.kdim]),
      b.weight("v_proj_weight", [E, c.vdim]),
    ];
  }
  const bias = c.bias ? b.weight("in_proj_bias", [3 * E]) : undefined;
  const biasOf = (part: string, i: number) => (bias ? rows(bias, `bias.${part}`, i) : undefined); // [E]
  const queries = b.add("projection", "queries", { x: s.query, weight: wq, bias: biasOf("q", 0) }); // [B, L, E]
  const keys = b.add("projection", "keys", { x: s.key, weight: wk, bias: biasOf("k", 1) }); // [B, S, E]
  const values = b.add("projection", "values", { x: s.value, weight: wv, bias: biasOf("v", 2) }); // [B, S, E]
  // Split heads: [B, len, E] → [B, len, H, D] → [B, H, len, D].
  const heads = (x: Ref, n: string, len: string) =>
    b.add(
      "transpose",
      `${n}.heads`,
      { x: b.add("reshape", `${n}.split`, { x }, { shape: ["B", len, H, D] }) },
      { perm: [0, 2, 1, 3] },
    );
  const S = o.selfAttention ? "L" : "S";
  const scores = b.add("score", "scores", { q: heads(queries, "q", "L"), k: heads(keys, "k", S) }); // [B, H, L, S]
  const scale = 1 / Math.sqrt(D);
  // An additive attn_mask is added after the scaling (softmax(q·kᵀ/√D + mask)), so the mask node scales and the
  // softmax gets 1, as build.ts does.
  const additive = o.mask === "bias";
  const masked =
    o.causal || s.mask || s.pad
      ? b.add(
          "mask",
          "masked",
          { scores, keyPaddingMask: s.pad, mask: additive ? undefined : s.mask, bias: additive ? s.mask : undefined },
          { causal: o.causal ?? false, window: null, scale: additive ? scale : 1, alignment: "top-left" },
        )
      : scores; // [B, H, L, S]
  const weights = b.add("softmax", "weights", { x: masked }, { scale: additive ? 1 : scale }); // [B, H, L, S]
  const ctxHeads = b.add("weighted-sum", "context.heads", { weights, v: heads(values, "v", S) }); // [B, H, L, D]
  const merged = b.add("transpose", "context.merge", { x: ctxHeads }, { perm: [0, 2, 1, 3] }); // [B, L, H, D]
  const context = b.add("reshape", "context", { x: merged }, { shape: ["B", "L", E] }); // [B, L, E]
  const out = b.add("out-proj", s.outName, {
    x: context,
    weight: b.weight("out_proj.weight", [E, E]),
    bias: c.bias ? b.weight("out_proj.bias", [E]) : undefined,
  }); // [B, L, E]
  return { out, weights };
}
