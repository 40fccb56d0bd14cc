import { describe, expect, it } from "vitest";
import { parseCli, UsageError } from "./cli.js";
import { COPY_SHAPE } from "./problem.js";
import { DEFAULT_BLOCK_SHAPES, DEFAULT_DECODE_SHAPES, DEFAULT_SHAPES, parseShape, shapeLabel } from "./shapes.js";

describe("parseCli", () => {
  it("has the documented defaults", () => {
    const o = parseCli([]);
    expect(o).toEqual({
      problem: "attention",
      impls: undefined,
      shapes: DEFAULT_SHAPES,
      shapeIgnored: false,
      threads: 1,
      json: "bench-results.json",
      runs: 10,
      warmup: 2,
      budgetS: 10,
      interleave: false,
      help: false,
    });
    expect(o.shapes.map(shapeLabel)).toEqual([
      "2,6,8,2",
      "4,128,256,8",
      "1,128,768,12",
      "1,512,768,12",
      "1,1024,768,12",
    ]);
  });

  it("reads a comma list of impls, repeated --shape, and the numeric flags", () => {
    const o = parseCli([
      "--impl",
      "cpu, tfjs-cpu",
      "--impl",
      "ort-node,cpu",
      "--shape",
      "1,128,768,12",
      "--shape",
      "2,6,8,2",
      "--threads",
      "2",
      "--runs",
      "12",
      "--warmup",
      "0",
      "--budget",
      "2.5",
      "--json",
      "out.json",
      "--interleave",
    ]);
    expect(o.impls).toEqual(["cpu", "tfjs-cpu", "ort-node"]);
    expect(o.shapes).toEqual([
      { b: 1, t: 128, d: 768, h: 12 },
      { b: 2, t: 6, d: 8, h: 2 },
    ]);
    expect([o.threads, o.runs, o.warmup, o.budgetS, o.json, o.interleave]).toEqual([2, 12, 0, 2.5, "out.json", true]);
  });

  it("--problem block selects the block, with its own default shapes unless --shape is given", () => {
    const o = parseCli(["--problem", "block"]);
    expect(o.problem).toBe("block");
    expect(o.shapes).toEqual(DEFAULT_BLOCK_SHAPES);
    expect(o.shapes.map(shapeLabel)).toEqual(["1,128,768,12", "1,512,768,12"]);
    expect(parseCli(["--problem", "block", "--shape", "2,6,8,2"]).shapes).toEqual([{ b: 2, t: 6, d: 8, h: 2 }]);
    expect(parseCli(["--problem", "attention"]).shapes).toEqual(DEFAULT_SHAPES);
  });

  it("--problem train-block: one step of the block, default shape 1,512,768,12, --shape as for the block", () => {
    const o = parseCli(["--problem", "train-block"]);
    expect(o.problem).toBe("train-block");
    expect(o.shapes.map(shapeLabel)).toEqual(["1,512,768,12"]);
    expect(
      parseCli(["--problem", "train-block", "--shape", "2,6,8,2", "--shape", "1,128,768,12"]).shapes.map(shapeLabel),
    ).toEqual(["2,6,8,2", "1,128,768,12"]);
  });

  it("--problem train-copy: the worked example's fixed shape; a --shape given is ignored, and said so", () => {
    const o = parseCli(["--problem", "train-copy"]);
    expect([o.problem, o.shapes, o.shapeIgnored]).toEqual(["train-copy", [COPY_SHAPE], false]);
    expect(shapeLabel(COPY_SHAPE)).toBe("32,8,32,4");
    const withShape = parseCli(["--problem", "train-copy", "--shape", "1,512,768,12"]);
    expect([withShape.shapes, withShape.shapeIgnored]).toEqual([[COPY_SHAPE], true]);
    expect(() => parseCli(["--problem", "train-copy", "--shape", "1,2"])).toThrow(UsageError); // still parsed
  });

  it("--problem decode: one new token over a cache of T; default caches of 128, 512 and 1024 at d 768, 12 heads, after a tiny one", () => {
    const o = parseCli(["--problem", "decode", "--impl", "wasm,cpu,ort-web,ort-node", "--threads", "1"]);
    expect([o.problem, o.impls, o.threads, o.shapeIgnored]).toEqual([
      "decode",
      ["wasm", "cpu", "ort-web", "ort-node"],
      1,
      false,
    ]);
    expect(o.shapes).toEqual(DEFAULT_DECODE_SHAPES);
    expect(o.shapes.map(shapeLabel)).toEqual(["2,6,8,2", "1,128,768,12", "1,512,768,12", "1,1024,768,12"]);
    expect(parseCli(["--problem", "decode", "--shape", "1,64,768,12"]).shapes.map(shapeLabel)).toEqual(["1,64,768,12"]);
  });

  it("rejects what it does not understand with a UsageError", () => {
    expect(() => parseCli(["--problem", "mlp"])).toThrow(
      /--problem "mlp": expected attention, block, train-block, train-copy, decode, flex or gpt2/,
    );
    for (const argv of [
      ["--shape", "1,128,768"],
      ["--shape", "1,128,768,0"],
      ["--shape", "1,128,770,12"],
      ["--threads", "0"],
      ["--runs", "0"],
      ["--runs", "ten"],
      ["--warmup", "-1"],
      ["--budget", "0"],
      ["--impl", ","],
      ["--frobnicate"],
      ["--problem", "Block"],
      ["--problem"],
      ["positional"],
    ]) {
      expect(() => parseCli(argv), argv.join(" ")).toThrow(UsageError);
    }
  });

  it("-h asks for help", () => {
    expect(parseCli(["-h"]).help).toBe(true);
  });
});

describe("parseShape", () => {
  it("says which rule a shape breaks", () => {
    expect(parseShape(" 4, 128,256 ,8")).toEqual({ b: 4, t: 128, d: 256, h: 8 });
    expect(() => parseShape("1,2,9,2")).toThrow(/divisible by heads/);
    expect(() => parseShape("1,2,3")).toThrow(/four positive integers/);
  });
});
