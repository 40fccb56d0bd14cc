// The shape rule of each built-in op, one input shape at a time (legend: B batch, H heads, Hkv kv heads, L query
// length, S key length, D head dim, E model dim).
import { describe, expect, it } from "vitest";
import { validationError } from "../../test/helpers.js";
import { GraphBuilder } from "../builder.js";
import { inferShape, makeContext, type AnyOpDef } from "../op-def.js";
import { builtinOps } from "./index.js";
import { kvAppendOp } from "./kv-append.js";

function builder(inputs: Record<string, (string | number)[]>): GraphBuilder {
  const b = new GraphBuilder();
  for (const [name, shape] of Object.entries(inputs)) b.input(name, shape);
  return b;
}

describe("built-in shape rules", () => {
  it("projection: [..., In] · [Out, In]ᵀ → [..., Out], for any leading rank", () => {
    const b = builder({ x1: [8], x4: ["B", 3, "T", 8], W: [6, 8], bias: [6] });
    expect(b.shapeOf(b.add("projection", "p1", { x: "x1", weight: "W" }))).toEqual([6]);
    expect(b.shapeOf(b.add("projection", "p4", { x: "x4", weight: "W", bias: "bias" }))).toEqual(["B", 3, "T", 6]);
    b.input("scalar", []);
    expect(validationError(() => b.add("projection", "p0", { x: "scalar", weight: "W" })).subject).toBe("p0.x");
  });

  it("projection with a symbolic weight dim checks only what is known", () => {
    const b = builder({ x: ["B", "T", "E"], W: ["E2", "E"] });
    expect(b.shapeOf(b.add("projection", "p", { x: "x", weight: "W" }))).toEqual(["B", "T", "E2"]);
  });

  it("out-proj: context [B, L, E] → [B, L, Eout]", () => {
    const b = builder({ ctx: ["B", "T", 8], W: [4, 8], bias: [4], bad: [5] });
    expect(b.shapeOf(b.add("out-proj", "o", { x: "ctx", weight: "W", bias: "bias" }))).toEqual(["B", "T", 4]);
    expect(validationError(() => b.add("out-proj", "o2", { x: "ctx", weight: "W", bias: "bad" })).subject).toBe(
      "o2.bias",
    );
  });

  it("score: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]", () => {
    const b = builder({ q: [2, 4, 5, 8], k: [2, 2, 7, 8] });
    expect(b.shapeOf(b.add("score", "s", { q: "q", k: "k" }))).toEqual([2, 4, 5, 7]);
  });

  it("weighted-sum: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]", () => {
    const b = builder({ w: [2, 4, 5, 7], v: [2, 1, 7, 3] });
    expect(b.shapeOf(b.add("weighted-sum", "c", { weights: "w", v: "v" }))).toEqual([2, 4, 5, 3]);
    b.input("v0", [2, 0, 7, 3]);
    expect(validationError(() => b.add("weighted-sum", "c0", { weights: "w", v: "v0" })).got).toBe("Hkv=0");
  });

  it("mask keeps [B, H, L, S]; the padding mask is [B, S]", () => {
    const b = builder({ s: [2, 4, 5, 7], pad: [2, 7], padB: [3, 7] });
    expect(
      b.shapeOf(
        b.add("mask", "m", { scores: "s", keyPaddingMask: "pad" }, { causal: true, alignment: "bottom-right" }),
      ),
    ).toEqual([2, 4, 5, 7]);
    const e = validationError(() => b.add("mask", "m2", { scores: "s", keyPaddingMask: "padB" }));
    expect([e.subject, e.expected, e.got]).toEqual(["m2.keyPaddingMask", "2", "3 in [3, 7]"]);
    b.input("flat", [2, 7]);
    expect(validationError(() => b.add("mask", "m3", { scores: "flat" })).subject).toBe("m3.scores");
  });

  it("softmax and dropout keep the shape; softmax needs an axis", () => {
    const b = builder({ s: ["B", 2, "T", "T"], scalar: [] });
    expect(b.shapeOf(b.add("softmax", "p", { x: "s" }, { scale: 0.125 }))).toEqual(["B", 2, "T", "T"]);
    expect(b.shapeOf(b.add("dropout", "d", { x: "s" }, { rate: 0.5, seed: 0xffffffff, training: true }))).toEqual([
      "B",
      2,
      "T",
      "T",
    ]);
    expect(validationError(() => b.add("softmax", "p0", { x: "scalar" })).subject).toBe("p0.x");
    expect(validationError(() => b.add("dropout", "d2", { x: "s" }, { seed: 2 ** 32 })).subject).toBe("d2.seed");
  });

  it("alibi keeps [B, H, L, S]; given slopes must be one per head when H is known", () => {
    const b = builder({ s: ["B", 3, "T", "S"], sym: ["B", "H", "T", "S"], flat: [2, 7] });
    expect(b.shapeOf(b.add("alibi", "a", { scores: "s" }, { slopes: [0.5, 0.25, 0.125], scale: 0.5 }))).toEqual([
      "B",
      3,
      "T",
      "S",
    ]);
    expect(b.shapeOf(b.add("alibi", "a0", { scores: "s" }))).toEqual(["B", 3, "T", "S"]); // null = the paper's slopes
    const e = validationError(() => b.add("alibi", "a2", { scores: "s" }, { slopes: [0.5, 0.25] }));
    expect([e.subject, e.expected, e.got]).toEqual(["a2.slopes", "3 slopes", "2"]);
    // A symbolic H passes until the runtime binds it.
    expect(b.shapeOf(b.add("alibi", "a3", { scores: "sym" }, { slopes: [0.5] }))).toEqual(["B", "H", "T", "S"]);
    expect(validationError(() => b.add("alibi", "a4", { scores: "flat" })).subject).toBe("a4.scores");
    expect(validationError(() => b.add("alibi", "a5", { scores: "s" }, { alignment: "center" })).subject).toBe(
      "a5.alignment",
    );
  });

  it("rope keeps [B, H, L, D]; D even, rotaryDim even and <= D when known", () => {
    const b = builder({ x: ["B", 2, "T", 8], odd: ["B", 2, "T", 7], sym: ["B", 2, "T", "D"] });
    expect(b.shapeOf(b.add("rope", "r", { x: "x" }))).toEqual(["B", 2, "T", 8]);
    expect(b.add("rope", "r1", { x: "odd" }, { rotaryDim: 4, positionOffset: 3 })).toBe("r1"); // an odd D with an even rotaryDim is fine
    let e = validationError(() => b.add("rope", "r2", { x: "odd" }));
    expect([e.subject, e.got]).toEqual(["r2.x", "D=7"]);
    e = validationError(() => b.add("rope", "r3", { x: "x" }, { rotaryDim: 10 }));
    expect([e.subject, e.expected, e.got]).toEqual(["r3.rotaryDim", "<= 8", "10"]);
    expect(validationError(() => b.add("rope", "r4", { x: "x" }, { rotaryDim: 3 })).subject).toBe("r4.rotaryDim");
    expect(validationError(() => b.add("rope", "r5", { x: "x" }, { base: 0 })).subject).toBe("r5.base");
    expect(validationError(() => b.add("rope", "r6", { x: "x" }, { positionOffset: -1 })).subject).toBe(
      "r6.positionOffset",
    );
    expect(validationError(() => b.add("rope", "r7", { x: "x" }, { positionOffset: 1.5 })).subject).toBe(
      "r7.positionOffset",
    );
    expect(b.shapeOf(b.add("rope", "r8", { x: "sym" }, { rotaryDim: 64 }))).toEqual(["B", 2, "T", "D"]);
    expect(b.output("r").build().node("r").attrs).toEqual({
      base: 10000,
      rotaryDim: null,
      positionOffset: 0,
      inverse: false,
    });
  });

  it("transpose permutes; reshape keeps the element count", () => {
    const b = builder({ x: ["B", "T", 2, 4] });
    expect(b.shapeOf(b.add("transpose", "t", { x: "x" }, { perm: [0, 2, 1, 3] }))).toEqual(["B", 2, "T", 4]);
    expect(b.shapeOf(b.add("reshape", "r", { x: "x" }, { shape: ["B", "T", 8] }))).toEqual(["B", "T", 8]);
  });

  it("marks exactly reshape, transpose, slice and kv-append (a view of its cache) as views", () => {
    expect(
      builtinOps
        .filter((o) => o.view)
        .map((o) => o.kind)
        .sort(),
    ).toEqual(["kv-append", "reshape", "slice", "transpose"]);
  });

  it("kv-append: [B, Hkv, M, D] + [B, Hkv, L, D] → [B, Hkv, past + L, D]; symbolic past gives the named length; a full cache or another Hkv fails naming the node", () => {
    const shape = (cache: (string | number)[], x: (string | number)[], past: number | string) =>
      inferShape(kvAppendOp as AnyOpDef, [cache, x], { past, length: "S" }, makeContext("k.cache"));
    expect(shape(["B", 2, 16, 4], ["B", 2, "T", 4], "P")).toEqual(["B", 2, "S", 4]);
    expect(shape([2, 2, 16, 4], [2, 2, 3, 4], 5)).toEqual([2, 2, 8, 4]);
    expect(() => shape([2, 2, 16, 4], [2, 2, 3, 4], 14)).toThrow(/k\.cache\.past: the cache is full/);
    expect(() => shape([2, 2, 16, 4], [2, 1, 3, 4], 0)).toThrow(/k\.cache\.x: dim 1 \(Hkv\) differs from the cache's/);
  });

  it("every built-in op documents itself and its inputs", () => {
    for (const op of builtinOps) {
      expect(op.doc.length, op.kind).toBeGreaterThan(10);
      expect(Object.isFrozen(op)).toBe(true);
    }
  });
});
