import { GraphBuilder, toJSON, fromJSON } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { addAttention, buildAttention } from "./build.js";
import { ConfigError } from "./config.js";
import { causalAttention, fusedQkvAttention, multiHeadAttention, selfAttention } from "./variants.js";

const standard = ["queries", "keys", "values", "scores", "weights", "context", "output"];

describe("buildAttention", () => {
  it("names the standard nodes and infers their shapes with the shape legend", () => {
    const g = multiHeadAttention({ dIn: 6, dOut: 8, numHeads: 2, causal: true });
    for (const n of standard) expect(g.has(n)).toBe(true);
    expect(g.shapeOf("queries")).toEqual(["B", "T", 8]);
    expect(g.shapeOf("q.heads")).toEqual(["B", 2, "T", 4]);
    expect(g.shapeOf("scores")).toEqual(["B", 2, "T", "T"]);
    expect(g.shapeOf("weights")).toEqual(["B", 2, "T", "T"]);
    expect(g.shapeOf("context")).toEqual(["B", "T", 8]);
    expect(g.outputs).toEqual(["output"]);
    expect(g.node("masked").attrs).toEqual({ causal: true, window: null, alignment: "top-left", scale: 1 });
    expect(g.node("weights").attrs).toEqual({ scale: 0.5 });
  });

  it("composes only graph nodes, with the score before the mask and the scale in the softmax", () => {
    const g = buildAttention({ dIn: 4, dOut: 4, numHeads: 1, causal: true, scale: 0.3 });
    expect(g.node("masked").inputs).toEqual({ scores: "scores" });
    expect(g.node("weights").inputs).toEqual({ x: "masked" });
    expect(g.node("weights").attrs.scale).toBe(0.3);
  });

  it("builds grouped-query attention with Hkv key/value heads", () => {
    const g = buildAttention({ dIn: 16, dOut: 16, numHeads: 4, numKvHeads: 2 });
    expect(g.shapeOf("keys")).toEqual(["B", "T", 8]);
    expect(g.shapeOf("k.heads")).toEqual(["B", 2, "T", 4]);
    expect(g.shapeOf("scores")).toEqual(["B", 4, "T", "T"]);
    expect(g.weights.find((w) => w.name === "W_key")!.shape).toEqual([8, 16]);
  });

  it("builds cross-attention from a second input with its own length", () => {
    const g = buildAttention({ dIn: 8, dOut: 8, numHeads: 2, cross: true }, { keyPaddingMask: true });
    expect(g.inputs.map((i) => [i.name, i.shape])).toEqual([
      ["x", ["B", "T", 8]],
      ["kv", ["B", "S", 8]],
      ["keyPaddingMask", ["B", "S"]],
    ]);
    expect(g.shapeOf("scores")).toEqual(["B", 2, "T", "S"]);
    expect(g.node("keys").inputs.x).toBe("kv");
  });

  it("adds dropout after the softmax, named weights, in eval mode unless asked", () => {
    const g = buildAttention({ dIn: 4, dOut: 4, numHeads: 1, dropout: 0.1 }, { seed: 7 });
    expect(g.node("probs").kind).toBe("softmax");
    expect(g.node("weights")).toMatchObject({ kind: "dropout", attrs: { rate: 0.1, seed: 7, training: false } });
  });

  it("without an output projection, the graph's output is the context", () => {
    const g = selfAttention({ dIn: 2, dOut: 2 });
    expect(g.outputs).toEqual(["context"]);
    expect(g.has("masked")).toBe(false);
    expect(causalAttention({ dIn: 2, dOut: 2 }).has("masked")).toBe(true);
  });

  it("fused QKV: one projection and three slices named queries/keys/values", () => {
    const g = fusedQkvAttention({ dIn: 16, dOut: 16, numHeads: 4, numKvHeads: 1, qkvBias: true });
    expect(g.node("qkv").kind).toBe("projection");
    expect(g.weights.map((w) => [w.name, w.shape])).toContainEqual(["W_qkv", [24, 16]]);
    expect(g.node("keys")).toMatchObject({ kind: "slice", attrs: { axis: -1, start: 16, size: 4 } });
    expect(g.shapeOf("values")).toEqual(["B", "T", 4]);
  });

  it("fused with cross-attention: queries projected alone, keys and values from one W_kv", () => {
    const g = fusedQkvAttention({ dIn: 8, dOut: 8, numHeads: 2, numKvHeads: 1, cross: true });
    expect(g.node("queries")).toMatchObject({ kind: "projection", inputs: { x: "x", weight: "W_query" } });
    expect(g.node("kv.proj").inputs).toEqual({ x: "kv", weight: "W_kv" });
    expect(g.weights.map((w) => [w.name, w.shape])).toContainEqual(["W_kv", [8, 8]]);
    expect(g.node("values")).toMatchObject({ kind: "slice", attrs: { start: 4, size: 4 } });
  });

  it("nests names under a prefix so blocks can be stacked", () => {
    const b = new GraphBuilder();
    let x = b.input("x", ["B", "T", 8]);
    for (const i of [0, 1])
      x = addAttention(b, x, { dIn: 8, dOut: 8, numHeads: 2 }, { prefix: `blocks.${i}.attn` }).output;
    const g = b.output(x).build();
    expect(g.has("blocks.1.attn.weights")).toBe(true);
    expect(g.weights.map((w) => w.name)).toContain("blocks.0.attn.W_query");
    expect(g.node("blocks.1.attn.queries").inputs.x).toBe("blocks.0.attn.output");
  });

  it("round-trips through JSON", () => {
    const g = buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true, window: 3 }, { keyPaddingMask: true });
    expect(JSON.stringify(toJSON(fromJSON(JSON.stringify(toJSON(g)))))).toBe(JSON.stringify(toJSON(g)));
  });

  it("rejects bad configs with errors naming the key", () => {
    expect(() => buildAttention({ dIn: 8, dOut: 10, numHeads: 4 })).toThrow(
      /config.dOut: dOut must be divisible by numHeads, expected a multiple of 4, got 10/,
    );
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 4, numKvHeads: 3 })).toThrow(
      /config.numKvHeads: numHeads must be divisible by numKvHeads/,
    );
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 2, window: 2 })).toThrow(
      /config.window: a sliding window needs causal/,
    );
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 2, window: 0, causal: true })).toThrow(
      /config.window: invalid window/,
    );
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 2, cross: true, causal: true })).toThrow(/config.causal/);
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 0 })).toThrow(
      /config.numHeads: invalid value, expected an integer >= 1, got 0/,
    );
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 2, heads: 2 } as never)).toThrow(
      /config.heads: unknown key/,
    );
    expect(() => buildAttention({ dIn: 8, dOut: 8, numHeads: 2, dropout: 1 })).toThrow(/config.dropout/);
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 8]);
    expect(() => addAttention(b, x, { dIn: 8, dOut: 8, numHeads: 2, cross: true })).toThrow(
      /config.cross: cross-attention needs a key\/value input `kv`/,
    );
  });
});

describe("position encodings", () => {
  const mha = { dIn: 8, dOut: 8, numHeads: 2, causal: true };

  it("rope: q.rope and k.rope after the split heads feed the score; the softmax keeps the scale", () => {
    const g = buildAttention(
      { dIn: 16, dOut: 16, numHeads: 4, numKvHeads: 2, causal: true },
      { position: { kind: "rope", rotaryDim: 2, positionOffset: 3 } },
    );
    expect(g.node("q.rope")).toMatchObject({
      kind: "rope",
      inputs: { x: "q.heads" },
      attrs: { base: 10000, rotaryDim: 2, positionOffset: 3 },
    });
    expect(g.node("k.rope")).toMatchObject({ kind: "rope", inputs: { x: "k.heads" } });
    expect(g.shapeOf("q.rope")).toEqual(["B", 4, "T", 4]);
    expect(g.shapeOf("k.rope")).toEqual(["B", 2, "T", 4]); // Hkv heads: keys are rotated before they are shared
    expect(g.node("scores")).toMatchObject({ kind: "score", inputs: { q: "q.rope", k: "k.rope" } });
    expect(g.node("weights").attrs).toEqual({ scale: 0.5 });
    expect(g.has("v.rope")).toBe(false);
  });

  it("alibi: scores.alibi between the raw scores and the mask takes the scale; the softmax gets scale 1", () => {
    const g = buildAttention(mha, { position: { kind: "alibi" } });
    expect(g.node("scores")).toMatchObject({ kind: "score", inputs: { q: "q.heads", k: "k.heads" } });
    expect(g.node("scores.alibi")).toMatchObject({
      kind: "alibi",
      inputs: { scores: "scores" },
      attrs: { slopes: null, scale: 0.5, alignment: "top-left" },
    });
    expect(g.node("masked").inputs).toEqual({ scores: "scores.alibi" });
    expect(g.node("weights").attrs).toEqual({ scale: 1 });
  });

  it("alibi without a mask feeds the softmax directly, with given slopes and a configured scale", () => {
    const g = buildAttention(
      { dIn: 8, dOut: 8, numHeads: 2, scale: 0.3 },
      { position: { kind: "alibi", slopes: [0.5, 0.25] } },
    );
    expect(g.has("masked")).toBe(false);
    expect(g.node("scores.alibi").attrs).toEqual({ slopes: [0.5, 0.25], scale: 0.3, alignment: "top-left" });
    expect(g.node("weights")).toMatchObject({ inputs: { x: "scores.alibi" }, attrs: { scale: 1 } });
  });

  it("nests the position nodes under a prefix and round-trips through JSON", () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", "T", 8]);
    const y = addAttention(b, x, mha, { prefix: "blocks.0.attn", position: { kind: "rope" } }).output;
    const z = addAttention(b, y, mha, {
      prefix: "blocks.1.attn",
      position: { kind: "alibi", slopes: [1, 0.5] },
    }).output;
    const g = b.output(z).build();
    expect(g.node("blocks.0.attn.q.rope").inputs.x).toBe("blocks.0.attn.q.heads");
    expect(g.node("blocks.1.attn.masked").inputs.scores).toBe("blocks.1.attn.scores.alibi");
    expect(JSON.stringify(toJSON(fromJSON(JSON.stringify(toJSON(g)))))).toBe(JSON.stringify(toJSON(g)));
  });

  it("rejects bad position options with a ConfigError naming the key", () => {
    const bad = (position: unknown) => () => buildAttention(mha, { position: position as never });
    expect(bad({ kind: "sinusoidal" })).toThrow(/config.position.kind: unknown position encoding/);
    expect(bad(null)).toThrow(/config.position: invalid position encoding/);
    expect(bad({ kind: "alibi", slopes: [0.5] })).toThrow(
      /config.position.slopes: ALiBi needs one slope per query head, expected 2 slopes, got 1/,
    );
    expect(bad({ kind: "alibi", slopes: [0.5, NaN] })).toThrow(/config.position.slopes: invalid ALiBi slopes/);
    expect(bad({ kind: "alibi", base: 10 })).toThrow(/config.position.base: unknown key for alibi/);
    expect(bad({ kind: "rope", slopes: [1, 1] })).toThrow(/config.position.slopes: unknown key for rope/);
    expect(bad({ kind: "rope", base: 0 })).toThrow(/config.position.base: invalid RoPE base/);
    expect(bad({ kind: "rope", rotaryDim: 3 })).toThrow(
      /config.position.rotaryDim: invalid rotaryDim, expected an even integer in \[2, 4\]/,
    );
    expect(bad({ kind: "rope", rotaryDim: 6 })).toThrow(/config.position.rotaryDim/);
    expect(bad({ kind: "rope", positionOffset: -1 })).toThrow(/config.position.positionOffset: invalid positionOffset/);
    expect(bad({ kind: "rope", positionOffset: 0.5 })).toThrow(/config.position.positionOffset/);
    expect(() => buildAttention({ dIn: 6, dOut: 6, numHeads: 2 }, { position: { kind: "rope" } })).toThrow(
      /config.position.rotaryDim: RoPE over the whole head dim needs an even D/,
    );
    expect(
      buildAttention({ dIn: 6, dOut: 6, numHeads: 2 }, { position: { kind: "rope", rotaryDim: 2 } }).shapeOf("q.rope"),
    ).toEqual(["B", 2, "T", 3]);
    try {
      bad({ kind: "rope", base: -1 })();
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).subject).toBe("config.position.base");
    }
  });

  it("a user 0/1 mask input feeds the mask node, which keeps the softmax scale", () => {
    const g = buildAttention({ ...mha, causal: false }, { userMask: "mask" });
    expect(g.inputs.map((v) => [v.name, v.shape])).toEqual([
      ["x", ["B", "T", 8]],
      ["mask", ["T", "T"]],
    ]);
    expect(g.node("masked").inputs).toEqual({ scores: "scores", mask: "mask" });
    expect(g.node("masked").attrs["scale"]).toBe(1);
    expect(g.node("weights").attrs).toEqual({ scale: 0.5 });
  });

  it("an additive bias is added after the scaling: the mask node takes the scale, the softmax gets 1", () => {
    const g = buildAttention(mha, { userMask: "bias" });
    expect(g.node("masked").inputs).toEqual({ scores: "scores", bias: "bias" });
    expect(g.node("masked").attrs).toEqual({ causal: true, window: null, alignment: "top-left", scale: 0.5 });
    expect(g.node("weights").attrs).toEqual({ scale: 1 });
  });

  it("weightNames renames weights, e.g. to PyTorch state_dict keys", () => {
    const g = buildAttention(
      { dIn: 8, dOut: 8, numHeads: 2, outBias: false },
      { fusedQkv: true, weightNames: { W_qkv: "qkv_proj.weight", out_proj: "out_proj.weight" } },
    );
    expect(g.weights.map((w) => [w.name, w.shape])).toEqual([
      ["qkv_proj.weight", [24, 8]],
      ["out_proj.weight", [8, 8]],
    ]);
  });
});
