import { readFileSync } from "node:fs";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { attentionRows, contextWindow, isAttentionNode, rowCellSize } from "./attention-rows.js";
import { attentionPatterns } from "./model-attention.js";
import { gptModelOf, readModelFile } from "./model-loader.js";

/** [1, H, T, T] with value 100·h + 10·i + j at (h, i, j). */
function pattern(H: number, T: number): Tensor {
  const data: number[] = [];
  for (let h = 0; h < H; h++) for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) data.push(100 * h + 10 * i + j);
  return Tensor.from(data, [1, H, T, T]);
}

describe("attentionRows", () => {
  it("takes row i over keys 0..i of every head, layers in order", () => {
    const rows = attentionRows(
      new Map([
        ["transformer.h.1.attn.weights", pattern(2, 3)],
        ["transformer.h.0.attn.weights", pattern(2, 3)],
        ["other", pattern(1, 1)],
      ]),
      1,
    );
    expect(rows.layers.length).toBe(2);
    expect(rows.layers[0]!.map((r) => [...r])).toEqual([
      [10, 11],
      [110, 111],
    ]);
    expect(isAttentionNode("transformer.h.12.attn.weights")).toBe(true);
    expect(isAttentionNode("transformer.h.1.attn.scores")).toBe(false);
  });

  it("says what is wrong: nothing tapped, a missing layer, a position outside the run", () => {
    expect(() => attentionRows(new Map(), 0)).toThrow("no transformer.h.<i>.attn.weights node was tapped");
    expect(() => attentionRows(new Map([["transformer.h.1.attn.weights", pattern(1, 2)]]), 0)).toThrow(
      "transformer.h.0.attn.weights: missing from the tapped nodes (layers 1 came)",
    );
    expect(() => attentionRows(new Map([["transformer.h.0.attn.weights", pattern(1, 2)]]), 2)).toThrow(
      "position: expected an integer in [0, 2) (the run's T), got 2",
    );
  });

  it("sizes a head's row within about 240 px, each cell 3 to 22 px", () => {
    expect(rowCellSize(1)).toBe(22);
    expect(rowCellSize(16)).toBe(15);
    expect(rowCellSize(1024)).toBe(3);
    for (const n of [5, 16, 40, 80]) expect(n * rowCellSize(n)).toBeLessThanOrEqual(240);
  });

  it("keeps the last blockSize tokens", () => {
    expect(contextWindow(5, 16)).toEqual({ start: 0, length: 5 });
    expect(contextWindow(20, 16)).toEqual({ start: 4, length: 16 });
  });

  it("reads every layer's rows off a real model's run: each row sums to 1", async () => {
    const bytes = new Uint8Array(
      readFileSync(new URL("../../../packages/testkit/golden-models/nanogpt-bias-l2.safetensors", import.meta.url)),
    );
    const model = gptModelOf(readModelFile("m", bytes), 4, [createCpuExecutor()]);
    const tapped = await attentionPatterns(model, [13, 3, 22, 27, 27]);
    expect([...tapped.keys()].sort()).toEqual(["transformer.h.0.attn.weights", "transformer.h.1.attn.weights"]);
    const rows = attentionRows(tapped, 3);
    expect(rows.layers.map((l) => l.length)).toEqual([4, 4]);
    for (const l of rows.layers)
      for (const r of l) {
        expect(r.length).toBe(4);
        expect(r.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
      }
    await model.dispose();
  });
});
