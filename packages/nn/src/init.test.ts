// defaultInit: PyTorch's default initialisation chosen by the op each weight feeds, repeatable from a seed.
import { GraphValidationError } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { defaultInit } from "./init.js";
import { simpleTransformer } from "./model.js";

const graph = simpleTransformer({ vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8 });
const stats = (a: ArrayLike<number>) => {
  const xs = Array.from(a);
  const mean = xs.reduce((s, v) => s + v, 0) / xs.length;
  return {
    min: Math.min(...xs),
    max: Math.max(...xs),
    mean,
    std: Math.sqrt(xs.reduce((s, v) => s + (v - mean) ** 2, 0) / xs.length),
  };
};

describe("defaultInit", () => {
  const w = defaultInit(graph, 3);

  it("gives every weight of the graph its declared shape", () => {
    expect(Object.keys(w)).toEqual(graph.weights.map((d) => d.name));
    for (const d of graph.weights) expect(w[d.name]!.shape, d.name).toEqual(d.shape);
  });

  it("nn.Linear: weight and bias uniform in ±1/sqrt(in); LayerNorm: ones and zeros; embedding and pos_embed: N(0, 1)", () => {
    for (const [name, fanIn] of [
      ["transformer.attention.qkv_proj.weight", 32],
      ["transformer.mlp.2.weight", 128],
      ["transformer.mlp.0.bias", 32],
      ["output.bias", 32],
    ] as const) {
      const s = stats(w[name]!.toArray());
      const bound = 1 / Math.sqrt(fanIn);
      expect(s.max, name).toBeLessThanOrEqual(bound);
      expect(s.min, name).toBeGreaterThanOrEqual(-bound);
      expect(s.max, name).toBeGreaterThan(bound * 0.8); // spread over the range, not a constant
    }
    expect(w["transformer.ln1.weight"]!.toArray().every((v) => v === 1)).toBe(true);
    expect(w["transformer.ln2.bias"]!.toArray().every((v) => v === 0)).toBe(true);
    for (const name of ["embed.weight", "pos_embed"]) {
      const s = stats(w[name]!.toArray());
      expect(Math.abs(s.mean), name).toBeLessThan(0.2);
      expect(Math.abs(s.std - 1), name).toBeLessThan(0.2);
    }
  });

  it('a seed that is not an integer, or a graph that is none, is a typed error naming it ("7" and 1.5 were silently 7 and 1)', () => {
    for (const seed of ["7", 1.5, NaN, null])
      expect(() => defaultInit(graph, seed as never)).toThrow(
        /^defaultInit seed: invalid seed, expected an integer \(taken modulo 2\^32\), got /,
      );
    expect(() => defaultInit(null as never)).toThrow(GraphValidationError);
    expect(() => defaultInit(null as never)).toThrow(/^defaultInit graph: not an op graph.*got null$/);
  });

  it("the same seed gives the same weights; another seed others", () => {
    expect(defaultInit(graph, 3)["embed.weight"]!.toArray()).toEqual(w["embed.weight"]!.toArray());
    expect(defaultInit(graph, 4)["embed.weight"]!.toArray()).not.toEqual(w["embed.weight"]!.toArray());
  });
});
