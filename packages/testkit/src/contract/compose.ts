// One attention block built from single dispatch calls, the way a lowered plan runs it, so that an executor can be
// checked end to end without the graph, scheduler or runtime. Values stay on the executor between calls; only the
// named tensors are downloaded.
// Legend: B batch, H heads, Hkv kv heads, L query length, S key length, D head dim, E = dOut = H·D.
import type { Tensor } from "@attngraph/tensor";
import { effectiveScale, type AttentionConfig } from "@attngraph/attention";
import type { ReferenceName } from "../reference/attention64.js";
import { attrs } from "./attrs.js";
import type { Harness } from "./harness.js";

/**
 * projection → reshape → transpose → score → mask → softmax → weighted-sum → transpose → reshape → out-proj.
 * @param weights as in the golden format (W_query, W_key, W_value, b_*, out_proj, out_bias)
 * @param inputs x [B, L, dIn]; kv [B, S, dIn] when cross; keyPaddingMask [B, S] (optional)
 */
export async function composeAttention(
  h: Harness,
  config: AttentionConfig,
  weights: Readonly<Record<string, Tensor>>,
  inputs: Readonly<Record<string, Tensor>>,
): Promise<Record<ReferenceName, Tensor>> {
  const { dOut: E, numHeads: H, numKvHeads: Hkv } = config;
  const D = E / H;
  const x = inputs["x"]!;
  const [B, L] = x.shape as [number, number];
  const kvIn = config.cross ? inputs["kv"]! : x;
  const S = kvIn.shape[1]!;
  const up = async (t: Tensor | undefined): Promise<unknown> => (t === undefined ? undefined : h.upload(t));
  const bias = (name: string): Tensor | undefined => (config.qkvBias ? weights[name] : undefined);

  const xv = await up(x);
  const kvv = config.cross ? await up(kvIn) : xv;
  /** v · W_<name>ᵀ + b_<name> (the bias where the config has one) → [B, T, width], the node called `${name}s`. */
  const project = async (v: unknown, name: "query" | "key" | "value", T: number, width: number): Promise<unknown> => {
    const wb = [await up(weights[`W_${name}`]), await up(bias(`b_${name}`))];
    return h.dispatch("projection", attrs.none(), [v, ...wb], [B, T, width], `${name}s`);
  };
  const queries = await project(xv, "query", L, E);
  const keys = await project(kvv, "key", S, Hkv * D);
  const values = await project(kvv, "value", S, Hkv * D);

  /** [B, T, n·D] → [B, T, n, D] → [B, n, T, D] */
  const splitHeads = async (v: unknown, n: number, T: number, name: string): Promise<unknown> => {
    const split = await h.dispatch("reshape", attrs.reshape([B, T, n, D]), [v], [B, T, n, D], `${name}.split`);
    return h.dispatch("transpose", attrs.transpose([0, 2, 1, 3]), [split], [B, n, T, D], `${name}.heads`);
  };
  const qh = await splitHeads(queries, H, L, "queries");
  const kh = await splitHeads(keys, Hkv, S, "keys");
  const vh = await splitHeads(values, Hkv, S, "values");

  const scores = await h.dispatch("score", attrs.none(), [qh, kh], [B, H, L, S], "scores"); // [B, H, L, S]
  const mask = attrs.mask({ causal: config.causal, window: config.window });
  const masked = await h.dispatch("mask", mask, [scores, await up(inputs["keyPaddingMask"])], [B, H, L, S], "masked");
  const attn = await h.dispatch("softmax", attrs.softmax(effectiveScale(config)), [masked], [B, H, L, S], "weights");
  const ctxHeads = await h.dispatch("weighted-sum", attrs.none(), [attn, vh], [B, H, L, D], "context.heads"); // [B, H, L, D]
  const merged = await h.dispatch(
    "transpose",
    attrs.transpose([0, 2, 1, 3]),
    [ctxHeads],
    [B, L, H, D],
    "context.merge",
  ); // [B, L, H, D]
  const context = await h.dispatch("reshape", attrs.reshape([B, L, E]), [merged], [B, L, E], "context"); // [B, L, E]
  const output = config.outProj
    ? await h.dispatch(
        "out-proj",
        attrs.none(),
        [context, await up(weights["out_proj"]), await up(config.outBias ? weights["out_bias"] : undefined)],
        [B, L, E],
        "output",
      )
    : context;

  const named = { queries, keys, values, scores, weights: attn, context, output };
  const out = {} as Record<ReferenceName, Tensor>;
  for (const [name, v] of Object.entries(named)) out[name as ReferenceName] = await h.download(v);
  return out;
}
