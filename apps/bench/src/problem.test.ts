import { describe, expect, it } from "vitest";
import {
  blockStateDict,
  causalMask,
  COPY_SHAPE,
  copyStateDict,
  isTrainKind,
  makeBenchProblem,
  makeBlockProblem,
  makeDecodeProblem,
  makeProblem,
  makeTrainBlockProblem,
  makeTrainCopyProblem,
  mulberry32,
  PROBLEM_KINDS,
  transpose2d,
} from "./problem.js";

describe("makeProblem", () => {
  it("is deterministic for a seed and different across seeds", () => {
    const s = { b: 2, t: 6, d: 8, h: 2 };
    expect(makeProblem(s).wq).toEqual(makeProblem(s).wq);
    expect(makeProblem(s, 1).x).not.toEqual(makeProblem(s, 2).x);
  });

  it("has the documented sizes, ranges and scale", () => {
    const p = makeProblem({ b: 2, t: 6, d: 8, h: 2 });
    expect([p.x.length, p.wq.length, p.wo.length, p.bo.length]).toEqual([96, 64, 64, 8]);
    expect(Math.max(...p.x.map(Math.abs))).toBeLessThanOrEqual(1);
    expect(Math.max(...p.wk.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(8));
    expect(p.scale).toBe(0.5); // 1/sqrt(D), D = 4
  });

  it("draws uniformly from mulberry32", () => {
    const r = mulberry32(7);
    const xs = Array.from({ length: 10_000 }, r);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(xs.reduce((a, x) => a + x, 0) / xs.length).toBeCloseTo(0.5, 1);
  });
});

describe("helpers", () => {
  it("transposes and builds the causal mask", () => {
    expect([...transpose2d(Float32Array.of(1, 2, 3, 4, 5, 6), 2, 3)]).toEqual([1, 4, 2, 5, 3, 6]);
    expect([...causalMask(3)]).toEqual([0, -Infinity, -Infinity, 0, 0, -Infinity, 0, 0, 0]);
  });
});

describe("the training problems", () => {
  it("train-block: the block problem's input and weights, plus a seeded gradOutput in [-1, 1) and Adam's lr", () => {
    const shape = { b: 2, t: 6, d: 8, h: 2 };
    const p = makeTrainBlockProblem(shape);
    const block = makeBlockProblem(shape);
    expect(p.kind).toBe("train-block");
    expect([p.x, p.wqkv, p.w2, p.ln1w]).toEqual([block.x, block.wqkv, block.w2, block.ln1w]);
    expect(p.gradOutput).toHaveLength(2 * 6 * 8);
    expect(p.gradOutput).not.toEqual(p.x);
    expect(Math.max(...p.gradOutput.map(Math.abs))).toBeLessThanOrEqual(1);
    expect(makeTrainBlockProblem(shape).gradOutput).toEqual(p.gradOutput);
    expect(p.lr).toBe(1e-3);
    expect(Object.keys(blockStateDict(p))).toEqual(Object.keys(blockStateDict(block)));
  });

  it("train-copy: the worked example's model and batch, fixed shape, tokens in [0, 10), 14 weights by state_dict name", () => {
    const p = makeTrainCopyProblem();
    expect([p.kind, p.shape, p.vocab]).toEqual(["train-copy", COPY_SHAPE, 10]);
    expect(p.tokens).toHaveLength(COPY_SHAPE.b * COPY_SHAPE.t);
    expect(Math.min(...p.tokens)).toBe(0);
    expect(Math.max(...p.tokens)).toBe(9);
    expect(new Set(p.tokens).size).toBe(10);
    const sd = copyStateDict(p);
    expect(Object.keys(sd)).toEqual([
      "embed.weight",
      "pos_embed",
      "transformer.ln1.weight",
      "transformer.ln1.bias",
      "transformer.attention.qkv_proj.weight",
      "transformer.attention.out_proj.weight",
      "transformer.ln2.weight",
      "transformer.ln2.bias",
      "transformer.mlp.0.weight",
      "transformer.mlp.0.bias",
      "transformer.mlp.2.weight",
      "transformer.mlp.2.bias",
      "output.weight",
      "output.bias",
    ]);
    expect([
      sd["embed.weight"]!.shape,
      sd["pos_embed"]!.shape,
      sd["transformer.mlp.0.weight"]!.shape,
      sd["output.weight"]!.shape,
    ]).toEqual([
      [10, 32],
      [1, 8, 32],
      [128, 32],
      [10, 32],
    ]);
    for (const { shape, data } of Object.values(sd)) expect(data).toHaveLength(shape.reduce((a, b) => a * b, 1));
    // embed and pos_embed N(0, 1), as nn.Embedding and torch.randn make them
    const e = [...p.embed, ...p.pos];
    const mean = e.reduce((a, x) => a + x, 0) / e.length;
    expect(Math.abs(mean)).toBeLessThan(0.1);
    expect(e.reduce((a, x) => a + (x - mean) ** 2, 0) / e.length).toBeCloseTo(1, 0);
    expect(makeTrainCopyProblem().embed).toEqual(p.embed);
  });

  it("makeBenchProblem builds each kind; train-copy ignores the shape it is given", () => {
    expect(PROBLEM_KINDS.filter(isTrainKind)).toEqual(["train-block", "train-copy"]);
    const shape = { b: 1, t: 4, d: 8, h: 2 };
    for (const kind of PROBLEM_KINDS.filter((k) => k !== "flex" && k !== "gpt2"))
      expect(makeBenchProblem(kind, shape).kind).toBe(kind);
    expect(() => makeBenchProblem("flex", shape)).toThrow(/makeFlexProblem/); // its rows have a variant and a part: src/flex
    expect(() => makeBenchProblem("gpt2", shape)).toThrow(/makeGpt2Problem/); // a whole model of its own: src/gpt2
    expect(makeBenchProblem("train-copy", shape).shape).toEqual(COPY_SHAPE);
    expect(makeBenchProblem("train-block", shape).shape).toEqual(shape);
  });
});

describe("the decode problem", () => {
  const shape = { b: 2, t: 6, d: 8, h: 2 };

  it("is the attention problem's weights with its x as the prompt, and a seeded new token [b, 1, d] in [-1, 1)", () => {
    const p = makeDecodeProblem(shape);
    const attention = makeProblem(shape);
    expect(p.kind).toBe("decode");
    expect([p.prompt, p.wq, p.wk, p.wv, p.wo, p.bo, p.scale]).toEqual([
      attention.x,
      attention.wq,
      attention.wk,
      attention.wv,
      attention.wo,
      attention.bo,
      attention.scale,
    ]);
    expect(p.token).toHaveLength(2 * 8);
    expect(Math.max(...p.token.map(Math.abs))).toBeLessThanOrEqual(1);
    expect(p.token).not.toEqual(p.prompt.subarray(0, 16));
  });

  it("is deterministic for a seed and different across seeds", () => {
    expect(makeDecodeProblem(shape).token).toEqual(makeDecodeProblem(shape).token);
    expect(makeDecodeProblem(shape, 1).token).not.toEqual(makeDecodeProblem(shape, 2).token);
    expect(makeBenchProblem("decode", shape)).toEqual(makeDecodeProblem(shape));
  });
});
