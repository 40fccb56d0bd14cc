// Shape and attribute rules of a Llama block's ops (rms-norm, silu, mul) and their backward ops.
// Legend: B batch, T tokens, E model dim.
import { describe, expect, it } from "vitest";
import { normBuilder, validationError } from "../../test/helpers.js";
import { GraphBuilder } from "../builder.js";

describe("llama block op rules", () => {
  it("rms-norm keeps the shape; weight must be [E] and is optional; eps must be positive (default 1e-6)", () => {
    const b = normBuilder();
    expect(b.shapeOf(b.add("rms-norm", "n", { x: "x", weight: "w" }))).toEqual(["B", "T", 8]);
    expect(validationError(() => b.add("rms-norm", "n2", { x: "x", weight: "bad" })).subject).toBe("n2.weight");
    expect(validationError(() => b.add("rms-norm", "n3", { x: "x" }, { eps: 0 })).subject).toBe("n3.eps");
    expect(validationError(() => b.add("rms-norm", "n4", { x: "x" }, { eps: -1 })).subject).toBe("n4.eps");
    expect(b.add("rms-norm", "n5", { x: "x" })).toBe("n5");
  });

  it("silu keeps the shape", () => {
    const b = new GraphBuilder();
    b.input("x", [2, "T", 3]);
    expect(b.shapeOf(b.add("silu", "act", { x: "x" }))).toEqual([2, "T", 3]);
  });

  it("mul broadcasts as add does; a mismatch names b and the axis", () => {
    const b = new GraphBuilder();
    b.input("x", ["B", "T", 8]);
    b.weight("scale", [8]);
    b.weight("bad", [1, 7]);
    expect(b.shapeOf(b.add("mul", "m", { a: "x", b: "scale" }))).toEqual(["B", "T", 8]);
    expect(b.shapeOf(b.add("mul", "m2", { a: "scale", b: "x" }))).toEqual(["B", "T", 8]);
    const e = validationError(() => b.add("mul", "m3", { a: "x", b: "bad" }));
    expect(e.subject).toBe("m3.b");
    expect(e.message).toMatch(/axis 0 from the end/);
  });

  it("rms-norm-grad keeps x's shape, rms-norm-weight-grad gives [E]; grad must be shaped like x", () => {
    const b = new GraphBuilder();
    b.input("x", [2, 3, 5]);
    b.input("g", [2, 3, 5]);
    b.input("other", [2, 3, 4]);
    b.weight("w", [5]);
    b.weight("w4", [4]);
    expect(b.shapeOf(b.add("rms-norm-grad", "dx", { grad: "g", x: "x", weight: "w" }))).toEqual([2, 3, 5]);
    expect(b.shapeOf(b.add("rms-norm-weight-grad", "dw", { grad: "g", x: "x" }))).toEqual([5]);
    expect(validationError(() => b.add("rms-norm-grad", "dx2", { grad: "g", x: "other" })).subject).toBe("dx2.x");
    expect(validationError(() => b.add("rms-norm-grad", "dx3", { grad: "g", x: "x", weight: "w4" })).subject).toBe(
      "dx3.weight",
    );
    expect(validationError(() => b.add("rms-norm-weight-grad", "dw2", { grad: "g", x: "x" }, { eps: 0 })).subject).toBe(
      "dw2.eps",
    );
  });
});
