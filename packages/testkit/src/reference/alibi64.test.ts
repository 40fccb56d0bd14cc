// Hand-checked values for the ALiBi reference: the paper's slopes and the bias layout.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { alibi64, alibiSlopes64 } from "./alibi64.js";

describe("alibiSlopes64 (the paper's get_slopes)", () => {
  it("8 heads: 1/2, 1/4, ..., 1/256", () => {
    expect(alibiSlopes64(8)).toEqual([1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
  });
  it("6 heads: the 4-head slopes, then get_slopes(8)[0::2][:2]", () => {
    // Python: get_slopes(6) == [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]
    expect(alibiSlopes64(6)).toEqual([0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]);
  });
  it("1, 2, 3 and 16 heads", () => {
    expect(alibiSlopes64(1)).toEqual([1 / 256]);
    expect(alibiSlopes64(2)).toEqual([1 / 16, 1 / 256]);
    expect(alibiSlopes64(3)).toEqual([1 / 16, 1 / 256, 1 / 4]);
    const s16 = alibiSlopes64(16);
    expect(s16[0]).toBeCloseTo(Math.SQRT1_2, 15);
    expect(s16[15]).toBeCloseTo(1 / 256, 15);
  });
});

describe("alibi64", () => {
  it("scale · scores + m · (j − i), top-left", () => {
    const out = alibi64(Float64Array.from([2, 2, 2, 2, 2, 2]), 1, 1, 2, 3, {
      slopes: [0.5],
      scale: 0.25,
      alignment: "top-left",
    });
    expect([...out]).toEqual([0.5, 1, 1.5, 0, 0.5, 1]);
  });
  it("bottom-right puts the last query at the last key; −∞ stays −∞", () => {
    const out = alibi64(Float64Array.from([0, 0, -Infinity, 0, 0, 0]), 1, 1, 2, 3, {
      slopes: [1],
      scale: 0,
      alignment: "bottom-right",
    });
    expect([...out]).toEqual([-1, 0, -Infinity, -2, -1, 0]);
  });
  it("null slopes are the paper's, one per head", () => {
    const out = alibi64(new Float64Array(6 * 2), 1, 6, 1, 2, { slopes: null, scale: 1, alignment: "top-left" });
    expect([...out].filter((_, k) => k % 2 === 1)).toEqual(alibiSlopes64(6));
  });
  it("slopes of the wrong length are an error", () => {
    expect(() => alibi64(new Float64Array(4), 1, 2, 1, 2, { slopes: [1], scale: 1, alignment: "top-left" })).toThrow(
      AttnGraphError,
    );
  });
});
