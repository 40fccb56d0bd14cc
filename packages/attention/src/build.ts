// Attention as a graph: every builder here composes only graph nodes (no kernels, no math). Node names follow the
// standard set so taps and golden cases line up: queries, keys, values, scores, weights, context, output.
//
// Shape legend: B batch, H heads, Hkv key/value heads, L query length (dim "T"), S key length ("T" for self-attention,
// "S" for cross-attention), D head dim, E = H·D model dim, Ekv = Hkv·D.
import { DECODE_DIMS, GraphBuilder, type OpGraph, type OpRegistry, type Ref } from "@attngraph/graph";
import {
  effectiveScale,
  headDim,
  normalizeConfig,
  ConfigError,
  type AttentionConfig,
  type AttentionConfigInput,
} from "./config.js";
import { positionAttrs, type PositionEncoding } from "./position.js";

export interface AttentionOptions {
  /**
   * One projection with weight W_qkv [E + 2·Ekv, dIn], then three slices (views), instead of three projections. With
   * cross-attention, queries keep their own projection and keys/values share one, W_kv [2·Ekv, dIn].
   */
  readonly fusedQkv?: boolean;
  /** Adds the input `keyPaddingMask` [B, S] (1 = padded key, ignored). */
  readonly keyPaddingMask?: boolean;
  /**
   * Adds a user mask input [T, S] to the mask node: "mask" is 0/1 where 0 hides the key (PyTorch
   * `masked_fill(mask == 0, -inf)`, the worked example's convention), "bias" is an additive float mask (PyTorch SDPA's
   * float `attn_mask`, −∞ hides). Either composes with causal, window and padding by "or".
   */
  readonly userMask?: "mask" | "bias";
  /**
   * Other names for the weights (before the prefix), by their standard name: e.g. `{ W_qkv: "qkv_proj.weight",
   * out_proj: "out_proj.weight" }` gives a graph that loads a PyTorch `state_dict` as it is.
   */
  readonly weightNames?: Readonly<Partial<Record<StandardWeight, string>>>;
  /** Dropout in training mode (with config.dropout > 0); eval (identity) by default. */
  readonly training?: boolean;
  /** Seed of the dropout mask. */
  readonly seed?: number;
  /** Nests node and weight names: "blocks.0.attn" gives "blocks.0.attn.weights". */
  readonly prefix?: string;
  /** A registry with user-declared ops, for graphs that mix them in. */
  readonly registry?: OpRegistry;
  /**
   * A position encoding. RoPE: nodes `q.rope` and `k.rope` after `q.heads`/`k.heads` feed the score. ALiBi: a node
   * `scores.alibi` between `scores` and the mask (or the softmax) applies the score scale and the bias, and the softmax
   * scale becomes 1. `scores` stays the raw Q·Kᵀ (of the rotated heads with RoPE).
   */
  readonly position?: PositionEncoding;
  /**
   * The graph of incremental decoding, for a decode session (`compileDecoder` of @attngraph/runtime): keys and values
   * (after RoPE) go through `kv-append` nodes `k.cache` and `v.cache` [B, Hkv, S, D] into caches kept between calls
   * (weights `k.cache.state`, `v.cache.state` [B, Hkv, M, D], which the session allocates), so each call takes only
   * the new tokens; the key length S is the cached length `P` (a dim the session binds) plus the new tokens T. The mask
   * and ALiBi align bottom-right (the last query is the last key) and RoPE starts at the absolute position `N`. Causal
   * self-attention only: without causality an earlier token's output would change when a later one arrives.
   */
  readonly decode?: boolean;
}

/** The standard weight names of an attention graph (the golden cases'). */
export type StandardWeight =
  | "W_query"
  | "W_key"
  | "W_value"
  | "b_query"
  | "b_key"
  | "b_value"
  | "W_qkv"
  | "b_qkv"
  | "W_kv"
  | "b_kv"
  | "out_proj"
  | "out_bias";

/** The refs of the standard nodes added by `addAttention`. */
export interface AttentionRefs {
  readonly queries: Ref;
  readonly keys: Ref;
  readonly values: Ref;
  readonly scores: Ref;
  readonly weights: Ref;
  readonly context: Ref;
  readonly output: Ref;
}

/**
 * Adds one attention block to a builder, reading queries from `x` [B, T, dIn] and keys/values from `kv` (= x unless
 * cross). Weight names are the golden cases' (W_query, W_key, W_value, b_*, out_proj, out_bias), prefixed.
 */
export function addAttention(
  b: GraphBuilder,
  x: Ref,
  configInput: AttentionConfigInput | AttentionConfig,
  options: AttentionOptions & {
    kv?: Ref;
    keyPaddingMaskRef?: Ref;
    maskRef?: Ref;
    biasRef?: Ref;
    outputName?: string;
  } = {},
): AttentionRefs {
  const c = normalizeConfig(configInput);
  const H = c.numHeads;
  const Hkv = c.numKvHeads;
  const D = headDim(c);
  const E = c.dOut;
  const Ekv = Hkv * D;
  const p = options.prefix ? `${options.prefix}.` : "";
  const name = (n: string) => p + n;
  const w = (n: StandardWeight, shape: readonly number[]) => b.weight(p + (options.weightNames?.[n] ?? n), shape);
  const xShape = b.shapeOf(x);
  if (xShape.length !== 3)
    throw new ConfigError("dIn", "queries input must be [B, T, dIn]", "rank 3", `rank ${xShape.length}`);
  const L = xShape[1]!;
  if (c.cross && !options.kv)
    throw new ConfigError("cross", "cross-attention needs a key/value input `kv`", "an input kv [B, S, dIn]", "none");
  const kv = c.cross ? options.kv! : x;
  const S = b.shapeOf(kv)[1]!;
  const batch = xShape[0]!;
  const position = options.position === undefined ? undefined : positionAttrs(options.position, H, D);
  const decode = options.decode === true;
  if (decode) checkDecodable(c, options, position?.kind === "rope" ? Number(position.attrs.positionOffset) : 0);
  // In decode mode the mask and ALiBi see [B, H, T, P + T]: query i of this call is at position P + i.
  const alignment = decode ? { alignment: "bottom-right" } : {};
  const ropeAttrs =
    position?.kind === "rope"
      ? { ...position.attrs, ...(decode ? { positionOffset: DECODE_DIMS.position } : {}) }
      : undefined;

  const proj = (n: string, src: Ref, wn: StandardWeight, bn: StandardWeight, rows: number) =>
    b.add("projection", name(n), { x: src, weight: w(wn, [rows, c.dIn]), bias: c.qkvBias ? w(bn, [rows]) : undefined });
  let queries: Ref, keys: Ref, values: Ref;
  if (options.fusedQkv && !c.cross) {
    // One matmul for all three; the slices are views of its output.
    const qkv = proj("qkv", x, "W_qkv", "b_qkv", E + 2 * Ekv); // [B, L, E + 2·Ekv]
    queries = b.add("slice", name("queries"), { x: qkv }, { axis: -1, start: 0, size: E }); // [B, L, E]
    keys = b.add("slice", name("keys"), { x: qkv }, { axis: -1, start: E, size: Ekv }); // [B, S, Ekv]
    values = b.add("slice", name("values"), { x: qkv }, { axis: -1, start: E + Ekv, size: Ekv }); // [B, S, Ekv]
  } else if (options.fusedQkv) {
    // Cross-attention: queries read x, keys and values read kv, so only K and V can share a matmul.
    queries = proj("queries", x, "W_query", "b_query", E); // [B, L, E]
    const kvp = proj("kv.proj", kv, "W_kv", "b_kv", 2 * Ekv); // [B, S, 2·Ekv]
    keys = b.add("slice", name("keys"), { x: kvp }, { axis: -1, start: 0, size: Ekv }); // [B, S, Ekv]
    values = b.add("slice", name("values"), { x: kvp }, { axis: -1, start: Ekv, size: Ekv }); // [B, S, Ekv]
  } else {
    queries = proj("queries", x, "W_query", "b_query", E); // [B, L, E]
    keys = proj("keys", kv, "W_key", "b_key", Ekv); // [B, S, Ekv]
    values = proj("values", kv, "W_value", "b_value", Ekv); // [B, S, Ekv]
  }

  // Split heads: [B, L, E] → [B, L, H, D] → [B, H, L, D] (both views).
  const heads = (src: Ref, n: string, len: string | number, h: number) =>
    b.add(
      "transpose",
      name(`${n}.heads`),
      { x: b.add("reshape", name(`${n}.split`), { x: src }, { shape: [batch, len, h, D] }) },
      { perm: [0, 2, 1, 3] },
    );
  let qh = heads(queries, "q", L, H); // [B, H, L, D]
  let kh = heads(keys, "k", S, Hkv); // [B, Hkv, S, D]
  if (ropeAttrs) {
    qh = b.add("rope", name("q.rope"), { x: qh }, ropeAttrs); // [B, H, L, D]
    kh = b.add("rope", name("k.rope"), { x: kh }, ropeAttrs); // [B, Hkv, S, D]
  }
  let vh = heads(values, "v", S, Hkv); // [B, Hkv, S, D]
  if (decode) {
    // This call's keys and values go into the caches; the score and weighted sum read all P + T positions.
    const cache = (n: string, src: Ref) =>
      b.add(
        "kv-append",
        name(`${n}.cache`),
        { cache: b.weight(name(`${n}.cache.state`), [batch, Hkv, "M", D]), x: src },
        { past: DECODE_DIMS.past, shift: DECODE_DIMS.shift, length: "S" },
      );
    kh = cache("k", kh); // [B, Hkv, S, D], S = P + T
    vh = cache("v", vh);
  }

  const scores = b.add("score", name("scores"), { q: qh, k: kh }); // [B, H, L, S], before scale and mask
  // ALiBi's bias is added after the scaling, softmax(q·kᵀ/√D + m·(j − i)), so its node takes the scale and the
  // softmax gets 1 (a softmax scale would scale the bias too).
  const alibi = position?.kind === "alibi";
  const biased = alibi
    ? b.add("alibi", name("scores.alibi"), { scores }, { ...position.attrs, ...alignment, scale: effectiveScale(c) })
    : scores; // [B, H, L, S]
  const padding = options.keyPaddingMaskRef;
  // An additive bias is added after the scaling, softmax(q·kᵀ·scale + bias), so (as with ALiBi) the mask node applies
  // the scale and the softmax gets 1. With ALiBi the scale is already applied.
  const bias = options.biasRef;
  const maskScale = bias && !alibi ? effectiveScale(c) : 1;
  const masked =
    c.causal || padding || options.maskRef || bias
      ? b.add(
          "mask",
          name("masked"),
          { scores: biased, keyPaddingMask: padding, mask: options.maskRef, bias },
          { causal: c.causal, window: c.window, scale: maskScale, ...alignment },
        )
      : biased; // [B, H, L, S], masked entries −∞
  const dropout = c.dropout > 0;
  const probs = b.add(
    "softmax",
    name(dropout ? "probs" : "weights"),
    { x: masked },
    { scale: alibi || bias ? 1 : effectiveScale(c) },
  ); // [B, H, L, S]
  const weights = dropout
    ? b.add(
        "dropout",
        name("weights"),
        { x: probs },
        { rate: c.dropout, seed: options.seed ?? 0, training: options.training ?? false },
      )
    : probs;
  const ctxHeads = b.add("weighted-sum", name("context.heads"), { weights, v: vh }); // [B, H, L, D]
  const merged = b.add("transpose", name("context.merge"), { x: ctxHeads }, { perm: [0, 2, 1, 3] }); // [B, L, H, D]
  const context = b.add("reshape", name("context"), { x: merged }, { shape: [batch, L, E] }); // [B, L, E]
  const output = c.outProj
    ? b.add("out-proj", options.outputName ?? name("output"), {
        x: context,
        weight: w("out_proj", [E, E]),
        bias: c.outBias ? w("out_bias", [E]) : undefined,
      })
    : context;
  return { queries, keys, values, scores, weights, context, output };
}

/**
 * A whole attention graph for `config` (the golden cases' config object): inputs `x` [B, T, dIn], plus `kv` [B, S, dIn]
 * when cross, `keyPaddingMask` [B, S] and a user `mask` or `bias` [T, S] when asked; one output (`output`, or `context` without an output projection).
 */
export function buildAttention(
  config: AttentionConfigInput | AttentionConfig,
  options: AttentionOptions = {},
): OpGraph {
  const c = normalizeConfig(config);
  const b = new GraphBuilder(options.registry ? { registry: options.registry } : {});
  const x = b.input("x", ["B", "T", c.dIn]);
  const S = c.cross ? "S" : "T";
  const kv = c.cross ? b.input("kv", ["B", S, c.dIn]) : undefined;
  const pad = options.keyPaddingMask ? b.input("keyPaddingMask", ["B", S]) : undefined;
  const user = options.userMask ? b.input(options.userMask, ["T", S]) : undefined;
  const refs = addAttention(b, x, c, {
    ...options,
    ...(kv ? { kv } : {}),
    ...(pad ? { keyPaddingMaskRef: pad } : {}),
    ...(user ? (options.userMask === "bias" ? { biasRef: user } : { maskRef: user }) : {}),
  });
  return b.output(refs.output).build();
}

/** Why a config cannot be decoded incrementally, as a ConfigError naming the key (see AttentionOptions.decode). */
function checkDecodable(c: AttentionConfig, options: AttentionOptions, ropeOffset: number): void {
  const no = (key: string, why: string, expected: string, got: string): never => {
    throw new ConfigError(key, `decode: ${why}`, expected, got);
  };
  if (!c.causal)
    no(
      "causal",
      "needs causal attention: otherwise earlier tokens attend to later ones and change as tokens arrive",
      "causal: true",
      "false",
    );
  if (c.cross)
    no("cross", "cross-attention has no cache to grow: its keys and values come from kv", "cross: false", "true");
  if (options.keyPaddingMask)
    no("keyPaddingMask", "a key padding mask is not supported", "no keyPaddingMask", "keyPaddingMask");
  if (options.userMask)
    no("userMask", "a user mask [T, S] is not supported (S grows every call)", "no userMask", options.userMask);
  if (c.dropout > 0 && options.training)
    no("dropout", "decoding runs in eval mode", "training: false", "training: true");
  if (ropeOffset !== 0)
    no("position.positionOffset", "RoPE positions come from the cache (P + t)", "0", String(ropeOffset));
}
