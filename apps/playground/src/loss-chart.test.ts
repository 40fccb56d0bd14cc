import { describe, expect, it } from "vitest";
import { linePoints, lossScale, niceCeil, type ChartBox } from "./loss-chart.js";

// A 100×50 plot with 10 px margins on the left and top: x in [10, 110], y in [10, 60].
const box: ChartBox = { width: 120, height: 70, left: 10, right: 10, top: 10, bottom: 10 };

describe("niceCeil", () => {
  it("rounds up to 1, 2, 2.5 or 5 times a power of ten", () => {
    expect([2.3379, 0.094, 1, 3, 7, 0.26, 2.5, 12].map(niceCeil)).toEqual([2.5, 0.1, 1, 5, 10, 0.5, 2.5, 20]);
  });
  it("falls back to 1 for nothing to scale", () => {
    expect([0, -1, Number.NaN, Infinity].map(niceCeil)).toEqual([1, 1, 1, 1]);
  });
});

describe("lossScale", () => {
  it("spans the planned steps on x, so the first step is at the left and the last planned one at the right", () => {
    const s = lossScale([2.3, 2.1], 11, box);
    expect(s.xMax).toBe(11);
    expect(s.x(1)).toBe(10);
    expect(s.x(11)).toBe(110);
    expect(s.x(6)).toBe(60);
  });

  it("runs y from 0 at the bottom to a round number above the highest loss at the top", () => {
    const s = lossScale([2.3379, 1.7, 0.09], 50, box);
    expect(s.yMax).toBe(2.5);
    expect(s.y(0)).toBe(60);
    expect(s.y(2.5)).toBe(10);
    expect(s.y(1.25)).toBe(35);
    // A lower loss is drawn lower: the falling curve goes down.
    expect(s.y(0.09)).toBeGreaterThan(s.y(1.7));
  });

  it("clamps values outside the axis to the plot", () => {
    const s = lossScale([1], 10, box);
    expect(s.y(-3)).toBe(60);
    expect(s.y(7)).toBe(10);
  });

  it("grows the x axis when more steps came than planned, and copes with one step", () => {
    expect(lossScale([1, 1, 1], 2, box).xMax).toBe(3);
    const one = lossScale([2], 1, box);
    expect(one.x(1)).toBe(10);
    expect(Number.isFinite(one.y(2))).toBe(true);
  });

  it("ignores losses that are not finite when it sizes the y axis", () => {
    expect(lossScale([Number.NaN, Infinity, 0.4], 5, box).yMax).toBe(0.5);
    expect(lossScale([], 5, box).yMax).toBe(1);
  });
});

describe("linePoints", () => {
  it("places step i + 1 at losses[i], leaving out losses that are not finite", () => {
    const losses = [2, Number.NaN, 1, 0];
    const s = lossScale(losses, 5, box);
    expect(s.yMax).toBe(2);
    expect(linePoints(losses, s)).toBe("10.0,10.0 60.0,35.0 85.0,60.0");
  });
  it("is empty for no steps", () => {
    expect(linePoints([], lossScale([], 5, box))).toBe("");
  });
});
