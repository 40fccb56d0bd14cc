import { describe, expect, it } from "vitest";
import { isDensePermutation, isRowMajor, leadingStride } from "./strides.js";

describe("isRowMajor", () => {
  it.each([
    { shape: [2, 3], strides: [3, 1], want: true },
    { shape: [2, 1, 3], strides: [3, 99, 1], want: true }, // a size-1 dim's stride is never used
    { shape: [2, 3], strides: [1, 2], want: false }, // transposed
    { shape: [2, 3], strides: [4, 1], want: false }, // rows sliced from wider ones
    { shape: [], strides: [], want: true },
  ])("$shape with strides $strides: $want", ({ shape, strides, want }) => {
    expect(isRowMajor({ shape, strides })).toBe(want);
  });
});

describe("leadingStride", () => {
  it.each([
    { shape: [2, 3, 4], strides: [12, 4, 1], want: 4 }, // dense
    { shape: [2, 3, 4], strides: [24, 8, 1], want: 8 }, // sliced along the last axis
    { shape: [2, 1, 4], strides: [4, 77, 1], want: 4 }, // size-1 axes skipped
    { shape: [3, 2, 4], strides: [4, 12, 1], want: undefined }, // [L, B, E] through a permute of [B, L, E]
    { shape: [4], strides: [1], want: 0 }, // one row
  ])("$shape with strides $strides: $want", ({ shape, strides, want }) => {
    expect(leadingStride({ shape, strides })).toBe(want);
  });
});

describe("isDensePermutation", () => {
  it.each([
    [[3, 4], [4, 1], true], // row-major
    [[4, 3], [1, 4], true], // its transpose
    [[2, 3, 4], [1, 8, 2], true], // a permutation of [3, 4, 2]
    [[2, 1, 3], [1, 99, 2], true], // a size-1 dim's stride does not matter
    [[3, 4], [8, 1], false], // every other row: a gap
    [[3, 4], [4, 2], false], // overlapping / strided columns
    [[3, 4], [0, 1], false], // broadcast
  ])("shape %j strides %j: %s", (shape, strides, want) => {
    expect(isDensePermutation({ shape, strides })).toBe(want);
  });
});
