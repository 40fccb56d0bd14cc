// score-mod and mask-mod (expressions as plain ONNX ops, ops/expr.ts) in onnxruntime against the cpu executor: the
// golden-flex variants built with flexAttention at other sizes (symbolic B, L, S), and the single nodes on
// expressions the cases do not reach (integer mod and floor division with negative operands, float mod, where- and
// and-guarded reads that would be out of range, gathered values as indices, a modification that ignores the score).
import { describe, expect, it } from "vitest";
import { flexAttention } from "@attngraph/attention";
import { GraphBuilder, type Expr, type SymShape } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { exportOnnx } from "./export.js";
import { expectOrtMatchesCpu, randomTensor } from "./test-against-cpu.js";

const modes = ["auto", "none"] as const;
const input = (name: string, ...index: Expr[]): Expr => ({ op: "input", name, index });
const op = (name: string, ...args: Expr[]): Expr => ({ op: name, args }) as Expr;
const causal = op("ge", "q", "kv");

/** q, k, v for flexAttention [B, H, L, D], [B, Hkv, S, D] with seeded values. */
function qkv(B: number, H: number, Hkv: number, L: number, S: number, D: number, seed: number) {
  return {
    q: randomTensor([B, H, L, D], seed, 2),
    k: randomTensor([B, Hkv, S, D], seed + 1, 2),
    v: randomTensor([B, Hkv, S, D], seed + 2),
  };
}

/** One score-mod and one mask-mod node over scores x [B, H, L, S] (symbolic), both outputs, plus their softmax. */
function modGraph(scoreMod: Expr | null, maskMod: Expr | null, gathered: Readonly<Record<string, SymShape>>) {
  const b = new GraphBuilder();
  const x = b.input("x", ["B", 3, "L", "S"]);
  const refs = Object.fromEntries(Object.entries(gathered).map(([n, s]) => [n, b.input(n, s)]));
  const slots = (e: Expr | null) => {
    const names = Object.keys(refs).filter((n) => JSON.stringify(e).includes(`"name":"${n}"`));
    return { slots: Object.fromEntries(names.map((n, i) => [`g${i}`, refs[n]!])), inputs: names };
  };
  const outs = [];
  let scores = x;
  if (scoreMod !== null) {
    const s = slots(scoreMod);
    scores = b.add("score-mod", "modified", { x, ...s.slots }, { scale: 0.7, expr: scoreMod, inputs: s.inputs });
    outs.push(scores);
  }
  if (maskMod !== null) {
    const s = slots(maskMod);
    scores = b.add("mask-mod", "masked", { x: scores, ...s.slots }, { expr: maskMod, inputs: s.inputs });
    outs.push(scores);
  }
  outs.push(b.add("softmax", "weights", { x: scores }, { scale: 1 }));
  return b.output(...outs).build();
}

describe.each(modes)("score-mod and mask-mod in onnxruntime match the cpu executor (contrib %s)", (contrib) => {
  it("ALiBi with gathered slopes, GQA, causal as a mask expression, L < S", async () => {
    const g = flexAttention({
      numHeads: 4,
      numKvHeads: 2,
      headDim: 8,
      scoreMod: op("add", "score", op("mul", input("slopes", "h"), op("sub", "kv", "q"))),
      maskMod: causal,
      gathered: { slopes: [4] },
    });
    await expectOrtMatchesCpu(
      g,
      {},
      { ...qkv(2, 4, 2, 5, 7, 8, 11), slopes: Tensor.from([0.5, 0.25, 0.125, 0.0625], [4]) },
      { contrib },
    );
  });

  it("softcap with a sliding-window mask", async () => {
    const g = flexAttention({
      numHeads: 2,
      headDim: 8,
      scoreMod: op("mul", op("tanh", op("div", "score", 1.5)), 1.5),
      maskMod: op("and", causal, op("lt", op("sub", "q", "kv"), 3)),
    });
    await expectOrtMatchesCpu(g, {}, qkv(1, 2, 2, 9, 9, 8, 21), { contrib });
  });

  it("a relative bias table [H, 2T − 1] and document ids [B, T] (causal within a document)", async () => {
    const T = 8;
    const g = flexAttention({
      numHeads: 2,
      headDim: 4,
      scoreMod: op("add", "score", input("bias", "h", op("add", op("sub", "q", "kv"), T - 1))),
      maskMod: op("and", op("eq", input("doc", "b", "q"), input("doc", "b", "kv")), causal),
      gathered: { bias: [2, 2 * T - 1], doc: [2, T] },
    });
    const doc = Tensor.from([0, 0, 0, 1, 1, 2, 2, 2, 0, 1, 1, 1, 1, 1, 3, 3], [2, T]);
    await expectOrtMatchesCpu(
      g,
      {},
      { ...qkv(2, 2, 2, T, T, 4, 31), bias: randomTensor([2, 2 * T - 1], 34), doc },
      { contrib },
    );
  });

  it("prefix-LM: a gathered prefix length per batch", async () => {
    const g = flexAttention({
      numHeads: 2,
      headDim: 4,
      maskMod: op("or", op("lt", "kv", input("prefix", "b")), causal),
      gathered: { prefix: [3] },
    });
    await expectOrtMatchesCpu(
      g,
      {},
      { ...qkv(3, 2, 2, 6, 6, 4, 41), prefix: Tensor.from([0, 3, 6], [3]) },
      { contrib },
    );
  });

  it("integer mod and floor division with negative operands, a variable divisor, float mod", async () => {
    const diff = op("sub", "q", "kv"); // negative above the diagonal
    const scoreMod = op(
      "add",
      op("add", op("mod", "score", 0.75), op("mul", op("mod", diff, 3), 0.5)),
      op(
        "add",
        op("mul", op("floor", op("div", diff, 4)), 0.25),
        op("mul", op("mod", op("neg", "kv"), op("add", "h", 2)), 0.125),
      ),
    );
    const maskMod = op("ne", op("mod", op("add", "q", "b"), 3), 1);
    await expectOrtMatchesCpu(
      modGraph(scoreMod, maskMod, {}),
      {},
      { x: randomTensor([2, 3, 5, 7], 51, 4) },
      { contrib },
    );
  });

  it("where- and and-guarded reads whose indices would be out of range where the guard is false", async () => {
    const diff = op("sub", "q", "kv");
    // table [4]: read only where 0 <= q − kv < 4; keep [3]: read only where kv < 3.
    const scoreMod = op(
      "where",
      op("and", op("ge", diff, 0), op("lt", diff, 4)),
      op("add", "score", input("table", diff)),
      op("sub", "score", 1),
    );
    const maskMod = op("or", op("ge", "kv", 3), op("gt", input("keep", "kv"), 0.5));
    const g = modGraph(scoreMod, maskMod, { table: [4], keep: [3] });
    await expectOrtMatchesCpu(
      g,
      {},
      {
        x: randomTensor([1, 3, 6, 6], 61, 2),
        table: Tensor.from([1, -2, 3, -4], [4]),
        keep: Tensor.from([1, 0, 1], [3]),
      },
      { contrib },
    );
  });

  it("a gathered value used as a value and as an index; a modification that ignores the score", async () => {
    const scoreMod = op(
      "mul",
      input("ids", "b", "kv"),
      op("sigmoid", op("add", "h", input("w", input("ids", "b", "q")))),
    );
    const maskMod = op("not", op("gt", op("abs", op("sub", "q", "kv")), op("max", op("min", "h", 1), 0)));
    const g = modGraph(scoreMod, maskMod, { ids: [2, "S"], w: [3] });
    const ids = Tensor.from([0, 1, 2, 0, 1, 2, 2, 1, 0, 0], [2, 5]);
    await expectOrtMatchesCpu(
      g,
      {},
      { x: randomTensor([2, 3, 5, 5], 71), ids, w: Tensor.from([0.5, -1, 2], [3]) },
      { contrib },
    );
  });

  it("exp, log, sqrt, abs, neg, min, max, le, where of true/false, gathered 4-D keep mask", async () => {
    const scoreMod = op(
      "add",
      op("log", op("add", op("exp", op("neg", op("abs", "score"))), 1)),
      op("sqrt", op("max", "score", op("min", "q", 2))),
    );
    const maskMod = op(
      "where",
      op("le", "kv", "q"),
      op("gt", input("keep", "b", "h", "q", "kv"), 0),
      op("eq", "kv", 0),
    );
    const g = modGraph(scoreMod, maskMod, { keep: ["B", 3, "L", "S"] });
    const keep = Tensor.from(
      Array.from({ length: 2 * 3 * 4 * 4 }, (_, i) => (i % 5 === 2 ? 0 : 1)),
      [2, 3, 4, 4],
    );
    await expectOrtMatchesCpu(g, {}, { x: randomTensor([2, 3, 4, 4], 81, 3), keep }, { contrib });
  });
});

describe("score-mod and mask-mod export", () => {
  it("names every ONNX node after its graph node", () => {
    const g = modGraph(op("add", "score", input("t", "h")), causal, { t: [3] });
    const text = new TextDecoder("latin1").decode(exportOnnx(g, {}));
    expect(text).toContain("modified/Gather");
    expect(text).toContain("masked/Where");
  });
});
