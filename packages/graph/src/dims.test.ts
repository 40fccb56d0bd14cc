import { describe, expect, it } from "vitest";
import { bindDims, formatDims, isConcrete, sameDim, sameSize } from "./dims.js";

describe("dims", () => {
  it("sameDim fails only when both dims are known and differ", () => {
    expect(sameDim(3, 3)).toBe(true);
    expect(sameDim(3, 4)).toBe(false);
    expect(sameDim("B", 4)).toBe(true);
    expect(sameDim(4, "B")).toBe(true);
    expect(sameDim("B", "B")).toBe(true);
    expect(sameDim("L", "S")).toBe(true); // may be bound to the same size
  });

  it("sameSize compares the numeric part when the symbols agree", () => {
    expect(sameSize(["B", "T", 8], ["T", "B", 2, 4])).toBe(true);
    expect(sameSize(["B", "T", 8], ["B", "T", 3, 3])).toBe(false);
    expect(sameSize(["B", "T", 8], ["B", 8])).toBe(true); // T may be 1
    expect(sameSize([2, 3], [6])).toBe(true);
    expect(sameSize([2, 3], [7])).toBe(false);
    expect(sameSize([], [1, 1])).toBe(true);
  });

  it("formats, checks and binds", () => {
    expect(formatDims(["B", 2, "T"])).toBe("[B, 2, T]");
    expect(formatDims([])).toBe("[]");
    expect(isConcrete([1, 2])).toBe(true);
    expect(isConcrete([1, "T"])).toBe(false);
    expect(bindDims(["B", "T", 8], new Map([["B", 2]]))).toEqual([2, "T", 8]);
  });
});
