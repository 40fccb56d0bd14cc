// MultiheadAttention's forward arguments as PyTorch takes them, checked on the host before anything runs and turned
// into a graph's options and inputs: shapes against the config (query [.., L, E], key [.., S, kdim], value
// [.., S, vdim], one batch, one S), masks by PyTorch's conventions (torch-masks.ts). And the head average of the weights.
import { formatShape, Tensor, type AnyTensor } from "@attngraph/tensor";
import type { MhaConfig } from "./mha-config.js";
import type { MhaGraphOptions } from "./mha.js";
import { attnMask, keyPaddingMask } from "./torch-masks.js";
import { ModelInputError, checkInputsObject } from "./token-ids.js";

export interface MhaInputs {
  /** [B, L, E] with batch_first, else [L, B, E]. */
  readonly query: unknown;
  /** [B, S, kdim] / [S, B, kdim]. The same tensor object as query and value is self-attention (one packed matmul). */
  readonly key: unknown;
  /** [B, S, vdim] / [S, B, vdim]. */
  readonly value: unknown;
  /** [L, S]: bool (int32 or booleans; True = not allowed) or float additive. */
  readonly attn_mask?: unknown;
  /** [B, S]: bool/int (True / 1 = padded key) or float additive. */
  readonly key_padding_mask?: unknown;
  /** Return attn_output_weights (PyTorch's default true). */
  readonly need_weights?: boolean;
  /** Weights averaged over heads [B, L, S] (default true), else per head [B, H, L, S]. */
  readonly average_attn_weights?: boolean;
  /**
   * A causal mask (query i sees keys j <= i). PyTorch 2 takes it as a hint that attn_mask is causal and needs the
   * mask too; here it is the mask itself, and composes with an attn_mask by "or".
   */
  readonly is_causal?: boolean;
}

export interface MhaOutputs {
  /** Shaped like query. */
  readonly attn_output: Tensor;
  /** [B, L, S] averaged over heads, [B, H, L, S] per head, or null with need_weights false (PyTorch's None). */
  readonly attn_output_weights: Tensor | null;
}

/** The graph options a forward call needs and the tensors it feeds, or a ModelInputError naming the argument. */
export function mhaFeed(
  c: MhaConfig,
  inputs: MhaInputs,
): { options: MhaGraphOptions; feed: Record<string, AnyTensor> } {
  checkInputsObject(inputs, "{ query, key, value, attn_mask?, key_padding_mask? }");
  const [B, L] = checked(c, "query", inputs.query, "L", c.embedDim);
  // PyTorch's `query is key is value`: one tensor, one packed matmul. With kdim or vdim other than E the same tensor
  // cannot be the key, so it goes through the three-input checks, which name the width that does not fit.
  const self =
    inputs.query === inputs.key && inputs.key === inputs.value && c.kdim === c.embedDim && c.vdim === c.embedDim;
  const o: { -readonly [K in keyof MhaGraphOptions]: MhaGraphOptions[K] } = {
    needWeights: inputs.need_weights ?? true,
  };
  const feed: Record<string, AnyTensor> = { query: inputs.query as Tensor };
  let S = L;
  if (self) o.selfAttention = true;
  else {
    const [bk, sk] = checked(c, "key", inputs.key, "S", c.kdim);
    const [bv, sv] = checked(c, "value", inputs.value, "S", c.vdim);
    if (bk !== B || bv !== B)
      throw new ModelInputError(
        bk !== B ? "key" : "value",
        "batch must match the query's",
        `B = ${B}`,
        String(bk !== B ? bk : bv),
      );
    if (sv !== sk)
      throw new ModelInputError("value", "key and value must have the same length S", `S = ${sk} (key's)`, String(sv));
    S = sk;
    feed["key"] = inputs.key as Tensor;
    feed["value"] = inputs.value as Tensor;
  }
  if (inputs.attn_mask !== undefined && inputs.attn_mask !== null) {
    const m = attnMask("attn_mask", inputs.attn_mask, L, S, "[L, S]");
    o.mask = m.kind;
    feed[m.kind === "mask" ? "attn_mask" : "attn_bias"] = m.tensor;
  }
  if (inputs.key_padding_mask !== undefined && inputs.key_padding_mask !== null) {
    o.keyPadding = true;
    feed["key_padding_mask"] = keyPaddingMask("key_padding_mask", inputs.key_padding_mask, B, S);
  }
  if (inputs.is_causal === true) o.causal = true;
  return { options: o, feed };
}

/** A float32 rank-3 input of width `width`: its [B, length] in the module's layout, or a ModelInputError. */
function checked(c: MhaConfig, name: string, x: unknown, len: string, width: number): [number, number] {
  const ok = Tensor.isTensor(x) && x.dtype === "float32" && x.shape.length === 3 && x.shape[2] === width;
  if (!ok) {
    const layout = c.batchFirst ? `[B, ${len}, ${width}]` : `[${len}, B, ${width}]`;
    const got = Tensor.isTensor(x) ? `${x.dtype} ${formatShape(x.shape)}` : x === undefined ? "none" : typeof x;
    throw new ModelInputError(
      name,
      `the module's ${name} input`,
      `a float32 tensor ${layout} (batch_first=${c.batchFirst ? "True" : "False"}; an unbatched 2-D input is not supported)`,
      got,
    );
  }
  const s = (x as Tensor).shape;
  return c.batchFirst ? [s[0]!, s[1]!] : [s[1]!, s[0]!];
}

/** [B, H, L, S] → [B, L, S], the mean over H. */
export function meanOverHeads(w: Tensor): Tensor {
  const [B, H, L, S] = w.shape as [number, number, number, number];
  const src = w.contiguous().data as Float32Array;
  const out = new Float32Array(B * L * S);
  const plane = L * S;
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) for (let i = 0; i < plane; i++) out[b * plane + i]! += src[(b * H + h) * plane + i]!;
  for (let i = 0; i < out.length; i++) out[i]! /= H;
  return Tensor.from(out, [B, L, S]);
}
