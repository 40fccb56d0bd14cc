import { describe, expect, it } from "vitest";
import { formatValue, matrixSlice, sliceLabel, tensorStats } from "./tensor-stats.js";

describe("tensorStats", () => {
  it("gives min, max and mean", () => {
    const s = tensorStats([1, -2, 4, 0.5]);
    expect(s).toMatchObject({ count: 4, min: -2, max: 4, negInf: 0, posInf: 0, nan: 0 });
    expect(s.mean).toBeCloseTo(0.875, 12);
  });

  it("leaves masked (−∞) and invalid entries out of the statistics and counts them", () => {
    const s = tensorStats(new Float32Array([1, -Infinity, 3, -Infinity, NaN, Infinity]));
    expect(s).toMatchObject({ count: 6, min: 1, max: 3, mean: 2, negInf: 2, posInf: 1, nan: 1 });
  });

  it("has no statistics without a finite value", () => {
    const s = tensorStats([-Infinity, -Infinity]);
    expect(Number.isNaN(s.min) && Number.isNaN(s.max) && Number.isNaN(s.mean)).toBe(true);
    expect(s.negInf).toBe(2);
    expect(Number.isNaN(tensorStats([]).mean)).toBe(true);
  });
});

describe("matrixSlice", () => {
  // [2, 3, 2, 2]: value = 100·a + 10·b + 2·r + c, so each element names its own index.
  const shape = [2, 3, 2, 2];
  const data: number[] = [];
  for (let a = 0; a < 2; a++)
    for (let b = 0; b < 3; b++)
      for (let r = 0; r < 2; r++) for (let c = 0; c < 2; c++) data.push(100 * a + 10 * b + 2 * r + c);

  it("takes the last two axes at a leading index", () => {
    const m = matrixSlice(shape, data, 4); // a = 1, b = 1
    expect([m.rows, m.cols, m.slices]).toEqual([2, 2, 6]);
    expect(m.lead).toEqual([1, 1]);
    expect(m.at(1, 0)).toBe(112);
    expect(m.at(0, 1)).toBe(111);
    expect(sliceLabel(shape, m)).toBe("[1, 1, :, :]");
  });

  it("clamps a stale slice index and handles low ranks", () => {
    expect(matrixSlice(shape, data, 99).lead).toEqual([1, 2]);
    const v = matrixSlice([3], [7, 8, 9], 0);
    expect([v.rows, v.cols, v.slices, v.at(0, 2)]).toEqual([1, 3, 1, 9]);
    expect(sliceLabel([3], v)).toBe("[:]");
    const s = matrixSlice([], [5], 0);
    expect([s.rows, s.cols, s.at(0, 0)]).toEqual([1, 1, 5]);
  });
});

describe("formatValue", () => {
  it("prints 6 significant digits and names the infinities", () => {
    expect(formatValue(0.123456789)).toBe("0.123457");
    expect(formatValue(-Infinity)).toBe("−∞");
    expect(formatValue(NaN)).toBe("NaN");
    expect(formatValue(1e-9)).toBe("1e-9");
  });
});
