// How a threaded matmul cuts C (the numbers of each cut are checked in src/threads.test.ts): rows in multiples of the
// 5-row tile, at least 40 a call unless parallelWork is 0; a matrix–vector product's columns on whole 24-column passes.
import { describe, expect, it } from "vitest";
import { columnParts, rowParts } from "./matmul.js";

const covers = (parts: [number, number][], n: number) =>
  parts.every(([a, b], i) => a < b && (i === 0 ? a === 0 : a === parts[i - 1]![1])) && parts.at(-1)![1] === n;

describe("rowParts", () => {
  it("cuts 512 rows into at most maxCalls calls of whole tiles, at least 40 rows each", () => {
    const parts = rowParts(2, 8, 512, 768, 768, 2 ** 20);
    expect(parts).toHaveLength(8);
    expect(covers(parts, 512)).toBe(true);
    expect(parts.slice(0, -1).every(([a, b]) => (b - a) % 5 === 0 && b - a >= 40)).toBe(true);
  });

  it("keeps 128 rows in few calls (not 8 of 16: each call streams all of B), as many for each thread, and small calls whole", () => {
    expect(rowParts(2, 8, 128, 768, 768, 2 ** 20)).toEqual([
      [0, 65],
      [65, 128],
    ]); // not 45, 45, 38: one thread 83 rows
    expect(rowParts(3, 12, 128, 768, 768, 2 ** 20)).toEqual([
      [0, 45],
      [45, 90],
      [90, 128],
    ]);
    expect(rowParts(4, 16, 128, 768, 768, 2 ** 20)).toEqual([
      [0, 45],
      [45, 90],
      [90, 128],
    ]); // fewer calls than threads: one each
    expect(rowParts(2, 8, 79, 768, 768, 2 ** 20)).toEqual([[0, 79]]);
    expect(rowParts(2, 8, 512, 8, 8, 2 ** 20)).toEqual([[0, 512]]); // 32768 multiply-adds
  });

  it("gives every thread as many calls when there are more calls than threads", () => {
    for (const [threads, m] of [
      [2, 200],
      [2, 360],
      [3, 512],
      [4, 1024],
    ] as const) {
      const parts = rowParts(threads, 4 * threads, m, 768, 768, 2 ** 20);
      expect(parts.length % threads).toBe(0);
      expect(covers(parts, m)).toBe(true);
    }
  });

  it("with parallelWork 0 cuts down to one tile of rows", () => {
    expect(rowParts(2, 4, 12, 8, 8, 0)).toEqual([
      [0, 10],
      [10, 12],
    ]);
    expect(rowParts(2, 4, 4, 8, 8, 0)).toEqual([[0, 4]]);
  });
});

describe("columnParts", () => {
  it("cuts 768 columns into whole 24-column passes, and keeps one pass whole", () => {
    const parts = columnParts(8, 768, 4 * 768 * 768, 2 ** 20);
    expect(parts).toEqual(Array.from({ length: 8 }, (_, i) => [96 * i, 96 * (i + 1)]));
    expect(columnParts(8, 20, 2 ** 30, 0)).toEqual([[0, 20]]);
    expect(covers(columnParts(3, 77, 2 ** 30, 0), 77)).toBe(true);
    expect(columnParts(8, 768, 2 ** 19, 2 ** 20)).toEqual([[0, 768]]);
  });
});
