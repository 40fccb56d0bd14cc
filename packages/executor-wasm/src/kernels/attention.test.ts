// How a threaded fused attention shares its batches and kv heads (the numbers of each share are checked in
// src/threads.test.ts): by batch when B ≥ threads or there is one kv head, else by kv head, in equal shares where a
// count between the threads and maxCalls divides them.
import { describe, expect, it } from "vitest";
import { threadParts } from "./attention.js";

describe("threadParts", () => {
  it("shares 12 kv heads of one batch over 2 threads as 6 calls of 2 (equal), not 8 of 1 or 2", () => {
    expect(threadParts(2, 8, 1, 12, 2 ** 30, 2 ** 20)).toEqual(
      Array.from({ length: 6 }, (_, i) => [0, 1, 2 * i, 2 * i + 2]),
    );
  });

  it("shares batches when there are at least as many as threads, or one kv head", () => {
    expect(threadParts(2, 8, 4, 8, 2 ** 30, 2 ** 20)).toEqual([
      [0, 1, 0, 8],
      [1, 2, 0, 8],
      [2, 3, 0, 8],
      [3, 4, 0, 8],
    ]);
    expect(threadParts(4, 16, 3, 1, 2 ** 30, 2 ** 20)).toEqual([
      [0, 1, 0, 1],
      [1, 2, 0, 1],
      [2, 3, 0, 1],
    ]);
  });

  it("keeps an uneven count when no divisor of it reaches the thread count, and small or single-threaded calls whole", () => {
    expect(threadParts(2, 8, 1, 7, 2 ** 30, 2 ** 20)).toHaveLength(7);
    expect(threadParts(2, 8, 1, 12, 2 ** 19, 2 ** 20)).toEqual([[0, 1, 0, 12]]);
    expect(threadParts(1, 4, 2, 12, 2 ** 30, 0)).toEqual([[0, 2, 0, 12]]);
  });
});
