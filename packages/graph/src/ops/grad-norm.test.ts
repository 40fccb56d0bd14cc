import { describe, expect, it } from "vitest";
import { validationError } from "../../test/helpers.js";
import { GraphBuilder } from "../builder.js";

// The shape rules of the training step's clipping and accumulation ops, and adam-step's lrScale.
describe("sum-squares, clip-by-norm, grad-accumulate and adam-step's lrScale", () => {
  it("sum-squares is [1] for any x (a chain through acc); clip-by-norm and grad-accumulate keep x's shape", () => {
    const b = new GraphBuilder();
    const g1 = b.input("g1", ["B", 3]);
    const g2 = b.input("g2", [4, 5, 6]);
    const s1 = b.add("sum-squares", "s1", { x: g1 }, {});
    const s2 = b.add("sum-squares", "s2", { x: g2, acc: s1 }, {});
    expect([b.shapeOf(s1), b.shapeOf(s2)]).toEqual([[1], [1]]);
    expect(b.shapeOf(b.add("clip-by-norm", "c", { x: g2, sumSquares: s2 }, { maxNorm: 1 }))).toEqual([4, 5, 6]);
    expect(
      b.shapeOf(b.add("grad-accumulate", "a", { acc: g2, grad: g2, step: b.input("k", []) }, { scale: 0.5 })),
    ).toEqual([4, 5, 6]);
    const p = b.input("p", [2, 2]);
    expect(
      b.shapeOf(
        b.add(
          "adam-step",
          "p.next",
          { param: p, m: p, v: p, step: b.input("t", [1]), lrScale: b.input("lr", [1]) },
          { lr: 1e-3 },
        ),
      ),
    ).toEqual([2, 2]);
  });

  it("a total, micro step or lrScale of more than one element, or shapes that differ, fail naming the field", () => {
    const b = new GraphBuilder();
    const x = b.input("x", [2, 3]);
    const two = b.input("two", [2]);
    expect(validationError(() => b.add("sum-squares", "s", { x, acc: two }, {})).subject).toBe("s.acc");
    expect(validationError(() => b.add("clip-by-norm", "c", { x, sumSquares: two }, { maxNorm: 1 })).subject).toBe(
      "c.sumSquares",
    );
    expect(
      validationError(() => b.add("clip-by-norm", "c", { x, sumSquares: b.input("t", [1]) }, { maxNorm: 0 })).subject,
    ).toBe("c.maxNorm");
    expect(
      validationError(() =>
        b.add("grad-accumulate", "a", { acc: x, grad: b.input("g", [3, 2]), step: b.input("k", [1]) }, { scale: 1 }),
      ).subject,
    ).toBe("a.grad");
    expect(
      validationError(() => b.add("grad-accumulate", "a", { acc: x, grad: x, step: two }, { scale: 1 })).subject,
    ).toBe("a.step");
    expect(
      validationError(() => b.add("grad-accumulate", "a", { acc: x, grad: x, step: b.input("k2", [1]) }, { scale: 0 }))
        .subject,
    ).toBe("a.scale");
    expect(
      validationError(() =>
        b.add("adam-step", "u", { param: x, m: x, v: x, step: b.input("t2", [1]), lrScale: two }, { lr: 1 }),
      ).subject,
    ).toBe("u.lrScale");
  });
});
