// The float64 reference of one attention block, written from shared/golden/FORMAT.md and composed from ops64.ts. It
// imports no executor and no graph code: it is the independent side of every comparison in this package.
// Legend: B batch, H heads, Hkv kv heads, L query length (T), S key length (Tkv), D head dim, E = dOut = H·D.
import { formatShape, sameShape, ShapeError } from "@attngraph/tensor";
import type { AttentionConfig } from "@attngraph/attention";
import { alibi64 } from "./alibi64.js";
import {
  linear64,
  mask64,
  mergeHeads64,
  score64,
  softmax64,
  splitHeads64,
  weightedSum64,
  type Tensor64,
} from "./ops64.js";
import { rope64 } from "./rope64.js";

/** A Tensor (any view) or plain row-major numbers with a shape. */
export type TensorLike =
  | { readonly shape: readonly number[]; toFloat32Array(): Float32Array }
  | { readonly shape: readonly number[]; readonly data: ArrayLike<number> };

/** A position encoding, as the builders' `position` option takes it. */
export type Position64 =
  | { readonly kind: "alibi"; readonly slopes?: readonly number[] }
  | { readonly kind: "rope"; readonly base?: number; readonly rotaryDim?: number; readonly positionOffset?: number };

export type ReferenceName = "queries" | "keys" | "values" | "scores" | "weights" | "context" | "output";

/**
 * Every named tensor of the golden format for one attention block, in float64.
 * @param weights W_query [E, dIn], W_key/W_value [Hkv·D, dIn], b_query [E], b_key/b_value [Hkv·D] (qkvBias),
 *   out_proj [E, E] (outProj), out_bias [E] (outBias)
 * @param inputs x [B, L, dIn]; kv [B, S, dIn] (cross); keyPaddingMask [B, S] (optional, 1 = padded key)
 * @param position RoPE on the split query and key heads (scores are then of the rotated heads), or ALiBi added to the
 *   scaled scores before the mask (softmax scale 1); none by default
 * @returns queries [B, L, E], keys/values [B, S, Hkv·D], scores (before scale and mask) and weights [B, H, L, S],
 *   context and output [B, L, E]
 */
export function referenceAttention(
  config: AttentionConfig,
  weights: Readonly<Record<string, TensorLike>>,
  inputs: Readonly<Record<string, TensorLike>>,
  position?: Position64,
): Record<ReferenceName, Tensor64> {
  const { dIn, dOut: E, numHeads: H, numKvHeads: Hkv } = config;
  const D = E / H;
  const Ekv = Hkv * D;
  const xT = need(inputs, "inputs", "x");
  if (xT.shape.length !== 3)
    throw new ShapeError("reference: inputs.x", "wrong rank", "[B, L, dIn]", formatShape(xT.shape));
  const [B, L] = xT.shape as [number, number];
  const x = take(inputs, "inputs", "x", [B, L, dIn]);
  const kvT = config.cross ? need(inputs, "inputs", "kv") : xT;
  const S = kvT.shape[1] ?? 0;
  const src = config.cross ? take(inputs, "inputs", "kv", [B, S, dIn]) : x;
  const bias = (name: string, n: number): Float64Array | undefined =>
    config.qkvBias ? take(weights, "weights", name, [n]) : undefined;

  const queries = linear64(x, dIn, take(weights, "weights", "W_query", [E, dIn]), E, bias("b_query", E)); // [B, L, E]
  const keys = linear64(src, dIn, take(weights, "weights", "W_key", [Ekv, dIn]), Ekv, bias("b_key", Ekv)); // [B, S, Hkv·D]
  const values = linear64(src, dIn, take(weights, "weights", "W_value", [Ekv, dIn]), Ekv, bias("b_value", Ekv)); // [B, S, Hkv·D]

  const dims = { B, H, Hkv, L, S, D };
  let qh = splitHeads64(queries, B, L, H, D); // [B, H, L, D]
  let kh = splitHeads64(keys, B, S, Hkv, D); // [B, Hkv, S, D]
  if (position?.kind === "rope") {
    const r = {
      base: position.base ?? 10000,
      rotaryDim: position.rotaryDim ?? null,
      positionOffset: position.positionOffset ?? 0,
    };
    qh = rope64(qh, B, H, L, D, r);
    kh = rope64(kh, B, Hkv, S, D, r);
  }
  const scores = score64(qh, kh, dims); // [B, H, L, S]
  let scale = config.scale ?? 1 / Math.sqrt(D);
  let biased = scores;
  if (position?.kind === "alibi") {
    // ALiBi's bias is added after scaling, softmax(q·kᵀ/√D + m·(j − i)): the scale moves out of the softmax.
    biased = alibi64(scores, B, H, L, S, { slopes: position.slopes ?? null, scale, alignment: "top-left" });
    scale = 1;
  }
  const pad = inputs["keyPaddingMask"] ? take(inputs, "inputs", "keyPaddingMask", [B, S]) : undefined;
  // Causal attention is self-attention (L = S), where both alignments agree.
  const masked = mask64(
    biased,
    B,
    H,
    L,
    S,
    { causal: config.causal, window: config.window, alignment: "top-left" },
    pad,
  );
  const attn = softmax64(masked, S, scale); // [B, H, L, S]
  const context = mergeHeads64(weightedSum64(attn, splitHeads64(values, B, S, Hkv, D), dims), B, H, L, D); // [B, L, E]
  const output = config.outProj
    ? linear64(
        context,
        E,
        take(weights, "weights", "out_proj", [E, E]),
        E,
        config.outBias ? take(weights, "weights", "out_bias", [E]) : undefined,
      )
    : Float64Array.from(context);

  return {
    queries: { shape: [B, L, E], data: queries },
    keys: { shape: [B, S, Ekv], data: keys },
    values: { shape: [B, S, Ekv], data: values },
    scores: { shape: [B, H, L, S], data: scores },
    weights: { shape: [B, H, L, S], data: attn },
    context: { shape: [B, L, E], data: context },
    output: { shape: [B, L, E], data: output },
  };
}

function need(map: Readonly<Record<string, TensorLike>>, group: string, name: string): TensorLike {
  const t = map[name];
  if (!t) throw new ShapeError(`reference: ${group}.${name}`, "missing tensor", "present", "absent");
  return t;
}

/** The named tensor as float64, after checking its shape. */
function take(
  map: Readonly<Record<string, TensorLike>>,
  group: string,
  name: string,
  shape: readonly number[],
): Float64Array {
  const t = need(map, group, name);
  if (!sameShape(t.shape, shape))
    throw new ShapeError(`reference: ${group}.${name}`, "wrong shape", formatShape(shape), formatShape(t.shape));
  return "toFloat32Array" in t ? Float64Array.from(t.toFloat32Array()) : Float64Array.from(t.data);
}
