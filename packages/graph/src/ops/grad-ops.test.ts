// The shape rules of the backward op kinds (what grad() adds), each with the input shapes it refuses, named.
import { describe, expect, it } from "vitest";
import { validationError } from "../../test/helpers.js";
import { GraphBuilder } from "../builder.js";

function builder(
  inputs: Record<string, (string | number)[]>,
  ints: Record<string, (string | number)[]> = {},
): GraphBuilder {
  const b = new GraphBuilder();
  for (const [name, shape] of Object.entries(inputs)) b.input(name, shape);
  for (const [name, shape] of Object.entries(ints)) b.input(name, shape, "int32");
  return b;
}

describe("backward op shape rules", () => {
  it("sum-to: drops leading axes and sums axes of 1; never adds axes or changes a dim", () => {
    const b = builder({ x: ["B", "T", 8], g: [2, 4, 3, 5, 6] });
    expect(b.shapeOf(b.add("sum-to", "s1", { x: "x" }, { shape: [8] }))).toEqual([8]);
    expect(b.shapeOf(b.add("sum-to", "s2", { x: "x" }, { shape: [1, "T", 8] }))).toEqual([1, "T", 8]);
    expect(b.shapeOf(b.add("sum-to", "s3", { x: "g" }, { shape: [2, 4, 1, 5, 6] }))).toEqual([2, 4, 1, 5, 6]);
    expect(b.shapeOf(b.add("sum-to", "s4", { x: "x" }, { shape: [] }))).toEqual([]);
    expect(validationError(() => b.add("sum-to", "bad1", { x: "x" }, { shape: [1, 1, "T", 8] })).subject).toBe(
      "bad1.shape",
    );
    expect(validationError(() => b.add("sum-to", "bad2", { x: "x" }, { shape: [4] })).subject).toBe("bad2.shape");
  });

  it("pad: the axis grows by before + after; a symbolic axis can only be padded by nothing", () => {
    const b = builder({ x: ["B", "T", 8] });
    expect(b.shapeOf(b.add("pad", "p1", { x: "x" }, { axis: -1, before: 8, after: 16 }))).toEqual(["B", "T", 32]);
    expect(b.shapeOf(b.add("pad", "p2", { x: "x" }, { axis: 1, before: 0, after: 0 }))).toEqual(["B", "T", 8]);
    expect(validationError(() => b.add("pad", "p3", { x: "x" }, { axis: 1, before: 1, after: 0 })).subject).toBe(
      "p3.axis",
    );
    expect(validationError(() => b.add("pad", "p4", { x: "x" }, { axis: 3, before: 1, after: 0 })).subject).toBe(
      "p4.axis",
    );
    expect(validationError(() => b.add("pad", "p5", { x: "x" }, { axis: 0, before: -1, after: 0 })).subject).toBe(
      "p5.before",
    );
  });

  it("linear-weight-grad: grad [..., Out] and x [..., In] with the same leading axes → [Out, In]", () => {
    const b = builder({ g: ["B", "T", 6], x: ["B", "T", 4], x2: [3, "T", 4], flat: [4] });
    expect(b.shapeOf(b.add("linear-weight-grad", "w", { grad: "g", x: "x" }))).toEqual([6, 4]);
    expect(b.shapeOf(b.add("linear-weight-grad", "w2", { grad: "g", x: "x2" }))).toEqual([6, 4]); // B may be 3
    expect(validationError(() => b.add("linear-weight-grad", "w3", { grad: "g", x: "flat" })).subject).toBe("w3.x");
  });

  it("softmax-grad, mask-grad, gelu-grad, layer-norm-grad: their inputs share one shape", () => {
    const b = builder({ y: [2, 3, 5], g: [2, 3, 5], other: [2, 3, 4], w: [5], w4: [4] });
    expect(b.shapeOf(b.add("softmax-grad", "s", { y: "y", grad: "g" }, { scale: 0.5 }))).toEqual([2, 3, 5]);
    expect(b.shapeOf(b.add("mask-grad", "m", { grad: "g", masked: "y" }))).toEqual([2, 3, 5]);
    expect(b.shapeOf(b.add("gelu-grad", "ge", { grad: "g", x: "y" }, { approximate: "tanh" }))).toEqual([2, 3, 5]);
    expect(b.shapeOf(b.add("layer-norm-grad", "ln", { grad: "g", x: "y", weight: "w" }))).toEqual([2, 3, 5]);
    expect(b.shapeOf(b.add("layer-norm-weight-grad", "lw", { grad: "g", x: "y" }))).toEqual([5]);
    expect(validationError(() => b.add("softmax-grad", "s2", { y: "y", grad: "other" })).subject).toBe("s2.grad");
    expect(validationError(() => b.add("mask-grad", "m2", { grad: "g", masked: "other" })).subject).toBe("m2.masked");
    expect(validationError(() => b.add("layer-norm-grad", "ln2", { grad: "g", x: "y", weight: "w4" })).subject).toBe(
      "ln2.weight",
    );
    expect(validationError(() => b.add("layer-norm-grad", "ln3", { grad: "g", x: "y" }, { eps: 0 })).subject).toBe(
      "ln3.eps",
    );
  });

  it("embedding-grad: int32 ids [...] and grad [..., E] → [rows, E]", () => {
    const b = builder({ g: ["B", 8, 16], bad: ["B", 16] }, { ids: ["B", 8] });
    expect(b.shapeOf(b.add("embedding-grad", "e", { ids: "ids", grad: "g" }, { rows: 10 }))).toEqual([10, 16]);
    expect(
      validationError(() => b.add("embedding-grad", "e2", { ids: "ids", grad: "bad" }, { rows: 10 })).subject,
    ).toBe("e2.grad");
    expect(validationError(() => b.add("embedding-grad", "e3", { ids: "g", grad: "g" }, { rows: 10 })).subject).toBe(
      "e3.ids",
    );
  });

  it("cross-entropy-grad: logits [..., V], targets [...], the loss gradient of the loss's shape or absent", () => {
    const b = builder({ logits: ["B", 8, 10], scalar: [], perPos: ["B", 8] }, { t: ["B", 8] });
    expect(b.shapeOf(b.add("cross-entropy-grad", "c", { logits: "logits", targets: "t" }))).toEqual(["B", 8, 10]);
    expect(b.shapeOf(b.add("cross-entropy-grad", "c2", { logits: "logits", targets: "t", grad: "scalar" }))).toEqual([
      "B",
      8,
      10,
    ]);
    expect(
      b.shapeOf(
        b.add("cross-entropy-grad", "c3", { logits: "logits", targets: "t", grad: "perPos" }, { reduction: "none" }),
      ),
    ).toEqual(["B", 8, 10]);
    expect(
      validationError(() => b.add("cross-entropy-grad", "c4", { logits: "logits", targets: "t", grad: "perPos" }))
        .subject,
    ).toBe("c4.grad");
  });
});
