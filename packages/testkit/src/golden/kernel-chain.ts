// A golden case's standard attention block run node by node through an executor's kernels, the calls a lowered plan
// of the standard attention builder makes: unfused (score → mask → softmax → dropout → weighted-sum) or fused
// (attention). No graph, scheduler or runtime: this checks the kernels against PyTorch, not the plumbing. The cpu and
// wasm golden tests each wrote this chain.
import type { Tensor } from "@attngraph/tensor";
import type { ValueExecutor } from "../contract/value-executor.js";
import type { GoldenCase } from "./case.js";

/** The intermediates only the unfused chain has (the fused attention never forms them). */
export const UNFUSED_ONLY: ReadonlySet<string> = new Set(["scores", "weights"]);

/** Runs `c` on `ex` and returns each named intermediate as a host tensor; every value made is released. */
export function goldenByKernels<V>(ex: ValueExecutor<V>, c: GoldenCase, fused: boolean): Record<string, Tensor> {
  const held: V[] = [];
  const hold = (v: V): V => {
    held.push(v);
    return v;
  };
  const up = (t: Tensor | undefined) => (t === undefined ? undefined : hold(ex.upload(t)));
  const call = (
    kind: string,
    node: string,
    inputs: (V | undefined)[],
    attrs: Record<string, unknown>,
    outShape: number[],
  ) => hold(ex.dispatch(kind, node, attrs, inputs, outShape));
  const { numHeads: H, numKvHeads: Hkv, dOut, causal, window, cross } = c.config;
  const D = dOut / H;
  const xHost = c.inputs.x!;
  const x = up(xHost)!;
  const kvIn = cross ? up(c.inputs.kv)! : x;
  const [B, L] = xHost.shape as [number, number];
  const S = cross ? c.inputs.kv!.shape[1]! : L;
  const w = (name: string) => up(c.weights[name]);
  const pad = up(c.inputs.keyPaddingMask);
  const scale = c.config.scale ?? 1 / Math.sqrt(D);

  const queries = call("projection", "queries", [x, w("W_query"), w("b_query")], {}, [B, L, dOut]); // (B, L, E)
  const keys = call("projection", "keys", [kvIn, w("W_key"), w("b_key")], {}, [B, S, Hkv * D]); // (B, S, Hkv·D)
  const values = call("projection", "values", [kvIn, w("W_value"), w("b_value")], {}, [B, S, Hkv * D]);
  const split = (t: V, name: string, heads: number, len: number) => {
    const r = call("reshape", `${name}.split`, [t], { shape: [B, len, heads, D] }, [B, len, heads, D]); // (B, len, heads, D)
    return call("transpose", `${name}.heads`, [r], { perm: [0, 2, 1, 3] }, [B, heads, len, D]); // (B, heads, len, D), a view
  };
  const q = split(queries, "queries", H, L);
  const k = split(keys, "keys", Hkv, S);
  const v = split(values, "values", Hkv, S);
  const maskAttrs = { causal, window, alignment: "top-left" };
  const got: Record<string, V> = { queries, keys, values };
  let heads: V;
  if (fused) {
    const attrs = { ...maskAttrs, scale, dropoutRate: 0.1, dropoutSeed: 1, training: false };
    heads = call("attention", "context.heads", [q, k, v, pad], attrs, [B, H, L, D]);
  } else {
    got.scores = call("score", "scores", [q, k], {}, [B, H, L, S]); // (B, H, L, S)
    const masked = call("mask", "masked", [got.scores, pad], maskAttrs, [B, H, L, S]);
    const probs = call("softmax", "probs", [masked], { scale }, [B, H, L, S]);
    got.weights = call("dropout", "weights", [probs], { rate: 0.1, seed: 1, training: false }, [B, H, L, S]);
    heads = call("weighted-sum", "context.heads", [got.weights, v], {}, [B, H, L, D]); // (B, H, L, D)
  }
  const merged = call("transpose", "context.merge", [heads], { perm: [0, 2, 1, 3] }, [B, L, H, D]); // (B, L, H, D)
  got.context = call("reshape", "context", [merged], { shape: [B, L, dOut] }, [B, L, dOut]); // (B, L, E), a copy
  got.output = c.weights.out_proj
    ? call("out-proj", "output", [got.context, w("out_proj"), w("out_bias")], {}, [B, L, c.weights.out_proj.shape[0]!])
    : got.context;
  const result = Object.fromEntries(Object.entries(got).map(([name, value]) => [name, ex.download(value)]));
  for (const value of held) ex.release(value);
  return result;
}
