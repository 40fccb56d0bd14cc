// The ablation state's rules: toggling, clearing on a new head count, and the output delta the page reports.
import { describe, expect, it } from "vitest";
import { ablationLine, forHeadCount, maxAbsDelta, noAblation, toggleHead } from "./ablation-state.js";

describe("ablation state", () => {
  it("toggles heads on and off, kept ascending", () => {
    let s = forHeadCount(noAblation, 4);
    s = toggleHead(s, 2);
    s = toggleHead(s, 0);
    expect(s.heads).toEqual([0, 2]);
    s = toggleHead(s, 2);
    expect(s.heads).toEqual([0]);
    expect(toggleHead(s, 0).heads).toEqual([]);
    expect(() => toggleHead(s, -1)).toThrow("toggleHead: a head index must be an integer >= 0, got -1");
  });

  it("keeps the heads while the head count stays, and clears them when it changes", () => {
    const s = toggleHead(forHeadCount(noAblation, 2), 1);
    expect(forHeadCount(s, 2)).toBe(s);
    expect(forHeadCount(s, 4)).toEqual({ numHeads: 4, heads: [] });
    // A field being retyped (blank, then a number) is a change of shape too.
    expect(forHeadCount(s, undefined).heads).toEqual([]);
    const nan = toggleHead(forHeadCount(noAblation, NaN), 0);
    expect(forHeadCount(nan, NaN)).toBe(nan);
  });

  it("measures the output change as max |a − b|, a NaN that appeared counting as infinite", () => {
    expect(maxAbsDelta([1, 2, 3], [1, 2.5, 2])).toBe(1);
    expect(maxAbsDelta([0, -0], [-0, 0])).toBe(0);
    expect(maxAbsDelta(new Float32Array([1, NaN]), new Float32Array([1, NaN]))).toBe(0);
    expect(maxAbsDelta([1, NaN], [1, 0])).toBe(Infinity);
    expect(() => maxAbsDelta([1], [1, 2])).toThrow("maxAbsDelta: the outputs differ in size: 1 and 2 values");
  });

  it("says what the ablation did to the output, or how to start one", () => {
    expect(ablationLine([1], 0.0123456789, "output")).toBe(
      "ablating head 1 changed output by max |Δ| = 0.0123457 (against the same config run without the ablation)",
    );
    expect(ablationLine([0, 2], 0.5, "output")).toContain("ablating heads 0, 2 changed output by max |Δ| = 0.5");
    expect(ablationLine([], undefined, "output")).toBe(
      "no head ablated: click a head's heatmap to zero its weights and see what output loses",
    );
  });
});
