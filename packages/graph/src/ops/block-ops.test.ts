// Shape, dtype and attribute rules of the block ops (layer-norm, gelu, add, embedding, cross-entropy) and of the mask
// op's user mask and bias inputs. Legend: B batch, T tokens, E model dim, V vocabulary, H heads, L/S query/key length.
import { describe, expect, it } from "vitest";
import { normBuilder, validationError } from "../../test/helpers.js";
import { broadcastShapes, broadcastStrides } from "../broadcast.js";
import { GraphBuilder } from "../builder.js";

describe("block op rules", () => {
  it("layer-norm keeps the shape; weight and bias must be [E]; eps must be positive", () => {
    const b = normBuilder();
    expect(b.shapeOf(b.add("layer-norm", "ln", { x: "x", weight: "w", bias: "w" }))).toEqual(["B", "T", 8]);
    expect(validationError(() => b.add("layer-norm", "ln2", { x: "x", weight: "bad" })).subject).toBe("ln2.weight");
    expect(validationError(() => b.add("layer-norm", "ln3", { x: "x" }, { eps: 0 })).subject).toBe("ln3.eps");
    expect(b.add("layer-norm", "ln4", { x: "x" })).toBe("ln4"); // affine is optional
  });

  it("gelu takes approximate none or tanh", () => {
    const b = new GraphBuilder();
    b.input("x", [2, 3]);
    expect(b.shapeOf(b.add("gelu", "g", { x: "x" }, { approximate: "tanh" }))).toEqual([2, 3]);
    expect(validationError(() => b.add("gelu", "g2", { x: "x" }, { approximate: "erf" })).subject).toBe(
      "g2.approximate",
    );
  });

  it("add broadcasts from the last axis; dims of 1 stretch; a mismatch names the axis", () => {
    const b = new GraphBuilder();
    b.input("x", ["B", "T", 8]);
    b.weight("pos", [1, 6, 8]);
    b.weight("bias", [8]);
    b.weight("bad", [7]);
    expect(b.shapeOf(b.add("add", "a1", { a: "x", b: "pos" }))).toEqual(["B", 6, 8]);
    expect(b.shapeOf(b.add("add", "a2", { a: "bias", b: "x" }))).toEqual(["B", "T", 8]);
    const e = validationError(() => b.add("add", "a3", { a: "x", b: "bad" }));
    expect(e.subject).toBe("a3.b");
    expect(e.message).toMatch(/axis 0 from the end/);
  });

  it("broadcastShapes and broadcastStrides agree with NumPy on concrete shapes", () => {
    const fail = (): never => {
      throw new Error("no broadcast");
    };
    expect(broadcastShapes([2, 1, 4], [3, 1], fail)).toEqual([2, 3, 4]);
    expect(broadcastShapes([], [3], fail)).toEqual([3]);
    expect(() => broadcastShapes([2, 3], [4, 3, 2], fail)).toThrow("no broadcast");
    expect(broadcastStrides([3, 1], [1, 1], [2, 3, 4])).toEqual([0, 1, 0]);
  });

  it("embedding: int32 ids [...] and a [V, E] table give [..., E]; float ids are a dtype error naming the slot", () => {
    const b = new GraphBuilder();
    b.input("tokens", ["B", "T"], "int32");
    b.input("floats", ["B", "T"]);
    b.weight("table", [10, 4]);
    const e = b.add("embedding", "embed", { ids: "tokens", weight: "table" });
    expect(b.shapeOf(e)).toEqual(["B", "T", 4]);
    expect(b.dtypeOf(e)).toBe("float32");
    const err = validationError(() => b.add("embedding", "embed2", { ids: "floats", weight: "table" }));
    expect(err.subject).toBe("embed2.ids");
    expect(err.message).toMatch(/wrong dtype, expected int32, got float32/);
    // int32 data may not reach a float slot either
    expect(validationError(() => b.add("gelu", "g", { x: "tokens" })).subject).toBe("g.x");
  });

  it("cross-entropy: logits [..., V] and targets [...] give [] (mean, sum) or [...] (none)", () => {
    const b = new GraphBuilder();
    b.input("logits", ["B", "T", 10]);
    b.input("targets", ["B", "T"], "int32");
    b.input("short", ["B"], "int32");
    expect(b.shapeOf(b.add("cross-entropy", "loss", { logits: "logits", targets: "targets" }))).toEqual([]);
    expect(
      b.shapeOf(b.add("cross-entropy", "per", { logits: "logits", targets: "targets" }, { reduction: "none" })),
    ).toEqual(["B", "T"]);
    expect(b.add("cross-entropy", "ign", { logits: "logits", targets: "targets" }, { ignoreIndex: -100 })).toBe("ign");
    expect(validationError(() => b.add("cross-entropy", "bad", { logits: "logits", targets: "short" })).subject).toBe(
      "bad.targets",
    );
  });

  it("mask: user mask and bias of rank 2, 3 or 4, dims equal to the scores' or 1; the graph records the slots", () => {
    const b = new GraphBuilder();
    b.input("scores", ["B", 2, "T", "T"]);
    b.input("m2", ["T", "T"]);
    b.input("m3", ["B", 1, "T"]);
    b.input("m4", [1, 2, "T", "T"]);
    b.input("bad", [3, 4, 5, 6, 7]);
    b.input("badHeads", [1, 3, "T", "T"]);
    for (const m of ["m2", "m3", "m4"])
      expect(b.shapeOf(b.add("mask", `mask.${m}`, { scores: "scores", mask: m, bias: m }))).toEqual(["B", 2, "T", "T"]);
    expect(validationError(() => b.add("mask", "x1", { scores: "scores", mask: "bad" })).subject).toBe("x1.mask");
    const e = validationError(() => b.add("mask", "x2", { scores: "scores", bias: "badHeads" }));
    expect(e.subject).toBe("x2.bias");
    expect(e.message).toMatch(/dim H must match the scores or be 1/);
    const g = b.output("mask.m2").build();
    expect(g.node("mask.m2").inputs).toEqual({ scores: "scores", mask: "m2", bias: "m2" });
    expect(g.node("mask.m2").attrs).toEqual({ causal: false, window: null, alignment: "top-left", scale: 1 });
  });
});
