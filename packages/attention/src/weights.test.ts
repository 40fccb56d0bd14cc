import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { attentionWeights } from "./weights.js";

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);
const config = { dIn: 2, dOut: 4, numHeads: 2, numKvHeads: 1, qkvBias: true, outBias: true };
const raw = {
  W_query: { shape: [4, 2], data: range(8) },
  W_key: { shape: [2, 2], data: range(4, 100) },
  W_value: Tensor.from(range(4, 200), [2, 2]),
  b_query: { shape: [4], data: range(4, 10) },
  b_key: { shape: [2], data: [20, 21] },
  b_value: { shape: [2], data: [30, 31] },
  out_proj: { shape: [4, 4], data: range(16) },
  out_bias: { shape: [4], data: range(4) },
};

describe("attentionWeights", () => {
  it("passes the golden names through as tensors", () => {
    const w = attentionWeights(config, raw);
    expect(Object.keys(w).sort()).toEqual([
      "W_key",
      "W_query",
      "W_value",
      "b_key",
      "b_query",
      "b_value",
      "out_bias",
      "out_proj",
    ]);
    expect(w.W_key!.toArray()).toEqual([100, 101, 102, 103]);
  });

  it("stacks Q, K, V rows for the fused projection", () => {
    const w = attentionWeights(config, raw, { fusedQkv: true });
    expect(w.W_qkv!.shape).toEqual([8, 2]);
    expect(w.W_qkv!.toArray()).toEqual([...range(8), ...range(4, 100), ...range(4, 200)]);
    expect(w.b_qkv!.toArray()).toEqual([10, 11, 12, 13, 20, 21, 30, 31]);
    expect(w.W_query).toBeUndefined();
  });

  it("names a missing weight", () => {
    const { W_key: _, ...rest } = raw;
    expect(() => attentionWeights(config, rest)).toThrow(/config.W_key: missing weight W_key/);
  });
});

describe("attentionWeights for fused cross-attention", () => {
  it("keeps W_query and stacks keys and values into W_kv", () => {
    const w = attentionWeights({ ...config, cross: true }, raw, { fusedQkv: true });
    expect(Object.keys(w).sort()).toEqual(["W_kv", "W_query", "b_kv", "b_query", "out_bias", "out_proj"]);
    expect(w.W_kv!.toArray()).toEqual([...range(4, 100), ...range(4, 200)]);
    expect(w.b_kv!.toArray()).toEqual([20, 21, 30, 31]);
  });
});
