import { describe, expect, it } from "vitest";
import { cellColour, colourDistance, cssColour, INVALID_RGB, MASKED_RGB, rampColour } from "./colormap.js";

describe("colormap", () => {
  it("maps the range ends to the ramp ends and clamps outside it", () => {
    expect(cellColour(0, { min: 0, max: 1 })).toEqual([68, 1, 84]);
    expect(cellColour(1, { min: 0, max: 1 })).toEqual([253, 231, 37]);
    expect(cellColour(-3, { min: 0, max: 1 })).toEqual(rampColour(0));
    expect(cellColour(7, { min: 0, max: 1 })).toEqual(rampColour(1));
    expect(cellColour(5, { min: 0, max: 10 })).toEqual(rampColour(0.5));
    expect(cellColour(2, { min: 2, max: 2 })).toEqual(rampColour(0.5));
  });

  it("is monotonic in brightness along the ramp", () => {
    const lum = (t: number) => {
      const [r, g, b] = rampColour(t);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    for (let t = 0; t < 1; t += 0.05) expect(lum(t + 0.05)).toBeGreaterThan(lum(t));
  });

  it("draws masked cells and −∞ scores in the masked colour, far from every ramp colour", () => {
    expect(cellColour(0, { min: 0, max: 1 }, true)).toEqual(MASKED_RGB);
    expect(cellColour(0.7, { min: 0, max: 1 }, true)).toEqual(MASKED_RGB);
    expect(cellColour(-Infinity, { min: -2, max: 2 })).toEqual(MASKED_RGB);
    let nearest = Infinity;
    for (let t = 0; t <= 1; t += 0.001) nearest = Math.min(nearest, colourDistance(MASKED_RGB, rampColour(t)));
    expect(nearest).toBeGreaterThan(80);
  });

  it("shows NaN and +∞ as invalid, never as a ramp colour", () => {
    expect(cellColour(NaN, { min: 0, max: 1 })).toEqual(INVALID_RGB);
    expect(cellColour(Infinity, { min: 0, max: 1 })).toEqual(INVALID_RGB);
    expect(cssColour([1, 2, 3])).toBe("rgb(1, 2, 3)");
  });
});
