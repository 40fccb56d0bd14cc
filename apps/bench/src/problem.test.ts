import { describe, expect, it } from "vitest";
import { causalMask, makeProblem, mulberry32, transpose2d } from "./problem.js";

describe("makeProblem", () => {
  it("is deterministic for a seed and different across seeds", () => {
    const s = { b: 2, t: 6, d: 8, h: 2 };
    expect(makeProblem(s).wq).toEqual(makeProblem(s).wq);
    expect(makeProblem(s, 1).x).not.toEqual(makeProblem(s, 2).x);
  });

  it("has the documented sizes, ranges and scale", () => {
    const p = makeProblem({ b: 2, t: 6, d: 8, h: 2 });
    expect([p.x.length, p.wq.length, p.wo.length, p.bo.length]).toEqual([96, 64, 64, 8]);
    expect(Math.max(...p.x.map(Math.abs))).toBeLessThanOrEqual(1);
    expect(Math.max(...p.wk.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(8));
    expect(p.scale).toBe(0.5); // 1/sqrt(D), D = 4
  });

  it("draws uniformly from mulberry32", () => {
    const r = mulberry32(7);
    const xs = Array.from({ length: 10_000 }, r);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(xs.reduce((a, x) => a + x, 0) / xs.length).toBeCloseTo(0.5, 1);
  });
});

describe("helpers", () => {
  it("transposes and builds the causal mask", () => {
    expect([...transpose2d(Float32Array.of(1, 2, 3, 4, 5, 6), 2, 3)]).toEqual([1, 4, 2, 5, 3, 6]);
    expect([...causalMask(3)]).toEqual([0, -Infinity, -Infinity, 0, 0, -Infinity, 0, 0, 0]);
  });
});
