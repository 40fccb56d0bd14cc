import { describe, expect, it } from "vitest";
import { allclose, compare } from "./allclose.js";
import { Tensor } from "./tensor.js";

const tol = { abs: 1e-3, rel: 1e-2 };

describe("compare", () => {
  it("uses |got - expected| <= abs + rel * |expected|", () => {
    // bound at expected 100: 1e-3 + 1 = 1.001
    expect(compare([101], [100], tol).ok).toBe(true);
    expect(compare([101.0011], [100], tol).ok).toBe(false);
    expect(compare([98.9995], [100], tol).ok).toBe(true);
    // the rule scales by |expected|, not |got|: expected 0 leaves only abs
    expect(compare([0.0009], [0], tol).ok).toBe(true);
    expect(compare([0.0011], [0], tol).ok).toBe(false);
    expect(compare([0], [0.0011], tol).ok).toBe(false); // 0.0011 > 0.001 + 0.01 * 0.0011
  });

  it("is not symmetric: the relative part scales by expected", () => {
    const a = { abs: 0, rel: 0.5 };
    expect(compare([1], [2], a).ok).toBe(true); // 1 <= 0.5 * 2
    expect(compare([2], [1], a).ok).toBe(false); // 1 > 0.5 * 1
  });

  it("uses 1e-5 for both tolerances by default", () => {
    expect(compare([1 + 1.5e-5], [1]).ok).toBe(true);
    expect(compare([1 + 3e-5], [1]).ok).toBe(false);
  });

  it("counts failures and reports the worst mismatched element", () => {
    const c = compare([1, 2.5, 3, 10], [1, 2, 3, 4], tol);
    expect(c.ok).toBe(false);
    expect(c.failures).toBe(2);
    expect(c.worst).toEqual({ index: 3, got: 10, expected: 4, error: 6 });
  });

  it("reports a failing element as worst even when a passing one has a larger absolute error", () => {
    // index 0: error 5 but within 1e-2 * 1000; index 1: error 0.5, a failure
    const c = compare([1005, 1.5], [1000, 1], { abs: 0, rel: 1e-2 });
    expect(c.failures).toBe(1);
    expect(c.worst?.index).toBe(1);
  });

  it("reports the largest error as worst when everything matches", () => {
    const c = compare([1, 2.0001, 3], [1, 2, 3], tol);
    expect(c.ok).toBe(true);
    expect(c.failures).toBe(0);
    expect(c.worst?.index).toBe(1);
    expect(c.worst?.error).toBeCloseTo(1e-4, 8);
  });

  it("NaN against a number is a mismatch, counted, and the worst element", () => {
    const c = compare([1, Number.NaN, 50], [1, 2, 3], tol);
    expect(c.ok).toBe(false);
    expect(c.failures).toBe(2);
    expect(c.worst?.index).toBe(1);
    expect(c.worst?.error).toBe(Infinity);
    expect(Number.isNaN(c.worst?.got)).toBe(true);
    const d = compare([1, 2], [Number.NaN, 2], tol);
    expect(d.failures).toBe(1);
    expect(d.worst?.index).toBe(0);
    expect(Number.isNaN(d.worst?.expected)).toBe(true);
  });

  it("NaN matches NaN only with equalNan", () => {
    expect(compare([Number.NaN], [Number.NaN], tol).ok).toBe(false);
    expect(compare([Number.NaN], [Number.NaN], tol, { equalNan: true }).ok).toBe(true);
    expect(compare([Number.NaN], [1], tol, { equalNan: true }).ok).toBe(false);
    expect(allclose([Number.NaN], [Number.NaN])).toBe(false);
  });

  it("equal infinities match; anything else against an infinity does not", () => {
    expect(compare([Infinity, -Infinity], [Infinity, -Infinity], tol).ok).toBe(true);
    const big = { abs: 1, rel: 1 };
    const c = compare([1e30, -Infinity, Infinity, 5], [Infinity, Infinity, 1e30, 5], big);
    expect(c.failures).toBe(3);
    expect(c.worst).toEqual({ index: 0, got: 1e30, expected: Infinity, error: Infinity });
    expect(compare([Infinity], [Infinity], { abs: 0, rel: 0 }).ok).toBe(true);
  });

  it("reports a shape mismatch between tensors, however close the values", () => {
    const c = compare(Tensor.zeros([2, 3]), Tensor.zeros([3, 2]));
    expect(c.ok).toBe(false);
    expect(c.failures).toBe(1);
    expect(c.worst).toBeUndefined();
    expect(c.shapeMismatch).toBe("shape [2, 3] vs [3, 2]");
    expect(compare(Tensor.zeros([6]), Tensor.zeros([1, 6])).shapeMismatch).toContain("[1, 6]");
  });

  it("reports a length mismatch between arrays", () => {
    const c = compare([1, 2], [1, 2, 3]);
    expect(c.ok).toBe(false);
    expect(c.shapeMismatch).toBe("2 elements vs 3");
  });

  it("compares strided tensor views in row-major order", () => {
    const t = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]).transpose(0, 1);
    expect(
      compare(
        t,
        Tensor.fromNested([
          [1, 4],
          [2, 5],
          [3, 6],
        ]),
      ).ok,
    ).toBe(true);
    expect(compare(t, [1, 4, 2, 5, 3, 6]).ok).toBe(true);
    expect(compare(t, [1, 2, 3, 4, 5, 6]).ok).toBe(false);
  });

  it("treats empty inputs as equal", () => {
    const c = compare([], []);
    expect(c.ok).toBe(true);
    expect(c.worst).toBeUndefined();
  });
});

describe("allclose", () => {
  it("is compare(...).ok", () => {
    expect(allclose([1, 2], [1, 2.00001])).toBe(true);
    expect(allclose([1, 2], [1, 2.1])).toBe(false);
    expect(allclose([1, 2], [1, 2.1], { abs: 0.2, rel: 0 })).toBe(true);
    expect(allclose([1], [Infinity], { abs: 1, rel: 1 })).toBe(false);
  });
});
