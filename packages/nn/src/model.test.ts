import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { crossEntropy64, goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { simpleTransformer } from "./model.js";
import { loadStateDict } from "./state-dict.js";

const copyTask = loadAnyCase(`${goldenTrainDir}/seed-003-copy-task-v10-e32-h4-t8.json`).case as TrainCase;
const config = { vocabSize: 10, embedDim: 32, nHeads: 4, seqLen: 8, blocks: 1 };

async function session(options: { loss?: boolean } = {}) {
  const g = simpleTransformer(config, options);
  return { g, s: await compile(g, { executors: [createCpuExecutor()], weights: loadStateDict(g, copyTask.params) }) };
}

const tokens = (rows: number[][]) => Tensor.int32(rows.flat(), [rows.length, rows[0]!.length]);

describe("simpleTransformer", () => {
  it("takes int32 tokens [B, seqLen] and names its weights like the worked example's state_dict", () => {
    const g = simpleTransformer(config);
    expect(g.inputs).toEqual([{ name: "tokens", shape: ["B", 8], dtype: "int32" }]);
    expect(g.weights.map((w) => w.name).sort()).toEqual(Object.keys(copyTask.params).sort());
    expect(g.shapeOf("output")).toEqual(["B", 8, 10]);
    expect(g.has("transformer.attention.weights")).toBe(true);
    const two = simpleTransformer({ ...config, blocks: 2 });
    expect(two.has("transformer.1.ln1") && two.has("transformer.0.output")).toBe(true);
  });

  it("the loss output is the mean cross-entropy of the logits against the targets", async () => {
    const { s } = await session({ loss: true });
    const t = tokens([
      [1, 2, 3, 4, 5, 6, 7, 8],
      [9, 0, 9, 0, 1, 1, 2, 2],
    ]);
    const out = await s.run({ tokens: t, targets: t });
    expect(out["output"]!.shape).toEqual([2, 8, 10]);
    const want = crossEntropy64(Float64Array.from(out["output"]!.toFloat32Array()), 10, t.toInt32Array(), "mean");
    expect(out["loss"]!.shape).toEqual([]);
    expect(Math.abs(out["loss"]!.toArray()[0]! - want[0]!)).toBeLessThan(1e-5);
    await s.dispose();
  });

  it("null options are a typed error naming simpleTransformer's options, not a TypeError", () => {
    expect(() => simpleTransformer(config, null as never)).toThrow(
      /^simpleTransformer options: options must be an object, expected \{ loss\?, registry\?, training\?, seed\? \}, got null$/,
    );
  });

  it("float32 tokens are a typed error naming the input; an id outside the vocabulary names the node and position; the session stays usable", async () => {
    const { s } = await session();
    const floats = await s
      .run({ tokens: Tensor.from(new Array<number>(8).fill(1), [1, 8]) as never })
      .catch((e: unknown) => e);
    expect(AttnGraphError.isInstance(floats) && floats.message).toMatch(
      /input tokens: wrong dtype, expected an int32 tensor \(Tensor\.int32\), got float32 \[1, 8\]/,
    );
    const bad = await s.run({ tokens: tokens([[1, 2, 3, 10, 5, 6, 7, 8]]) }).catch((e: unknown) => e);
    expect(AttnGraphError.isInstance(bad) && bad.message).toMatch(
      /embed\.ids: token id out of range, expected token id in \[0, 10\), got 10 at \[0, 3\]/,
    );
    expect((await s.run({ tokens: tokens([[1, 2, 3, 4, 5, 6, 7, 8]]) }))["output"]!.shape).toEqual([1, 8, 10]);
    await s.dispose();
  });

  it("dropout: attention dropout in training graphs only, each block with its own seed; a bad rate is a ConfigError", () => {
    const config = { vocabSize: 10, embedDim: 8, nHeads: 2, seqLen: 4, blocks: 2, dropout: 0.1 };
    const training = simpleTransformer(config, { training: true, seed: 5 });
    const drops = training.nodes.filter((n) => n.kind === "dropout");
    expect(drops.map((n) => [n.name, n.attrs["rate"], n.attrs["seed"], n.attrs["training"]])).toEqual([
      ["transformer.0.attention.weights", 0.1, 5, true],
      ["transformer.1.attention.weights", 0.1, 6, true],
    ]);
    // Built without training: the dropout nodes are the identity (eval), as PyTorch's module.eval().
    expect(
      simpleTransformer(config)
        .nodes.filter((n) => n.kind === "dropout")
        .every((n) => n.attrs["training"] === false),
    ).toBe(true);
    expect(() => simpleTransformer({ ...config, dropout: 1 })).toThrow(
      /dropout: invalid dropout rate, expected a number in \[0, 1\), got 1/,
    );
    expect(() => simpleTransformer(config, { training: true, seed: -1 })).toThrow(/seed: invalid dropout seed/);
  });
});
