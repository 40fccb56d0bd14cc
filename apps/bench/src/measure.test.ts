import { describe, expect, it } from "vitest";
import { measure, measureInterleaved, median } from "./measure.js";

/** A clock that advances by `cost(run)` ms on each run of the returned function. */
function fakeClock(cost: (i: number) => number) {
  let t = 0;
  let i = 0;
  return {
    now: () => t,
    fn: async () => {
      t += cost(i++);
    },
    count: () => i,
  };
}

describe("median", () => {
  it("takes the middle value, or the mean of the middle two", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(() => median([])).toThrow(/empty/);
  });
});

describe("measure", () => {
  it("does the warm-up runs, then the timed runs, and reports their median", async () => {
    const c = fakeClock((i) => (i < 2 ? 1000 : i)); // slow first runs (warm-up), then 2, 3, … 11 ms
    const m = await measure(c.fn, { runs: 10, warmup: 2, warmupMs: 0, budgetMs: 1e9, minRuns: 3 }, c.now);
    expect(m.warmupRuns).toBe(2);
    expect(m.samplesMs).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(m.medianMs).toBe(6.5);
    expect(m.minMs).toBe(2);
    expect(m.budgetLimited).toBe(false);
  });

  it("stops a slow row at the budget but never before minRuns", async () => {
    const c = fakeClock(() => 4000);
    const m = await measure(c.fn, { runs: 10, warmup: 2, budgetMs: 10_000, minRuns: 3 }, c.now);
    expect(m.warmupRuns).toBe(1); // the second warm-up would start past a quarter of the budget
    expect(m.samplesMs).toHaveLength(3);
    expect(m.budgetLimited).toBe(true);
    const c2 = fakeClock(() => 3000);
    const m2 = await measure(c2.fn, { runs: 10, warmup: 0, budgetMs: 10_000, minRuns: 3 }, c2.now);
    expect(m2.warmupRuns).toBe(0);
    expect(m2.samplesMs).toHaveLength(4); // 3 runs = 9 s < 10 s, so a fourth starts
  });

  it("keeps fast rows warming up until warmupMs have passed", async () => {
    const c = fakeClock(() => 1);
    const m = await measure(c.fn, { runs: 10, warmup: 2, warmupMs: 50, budgetMs: 10_000, minRuns: 3 }, c.now);
    expect(m.warmupRuns).toBe(50);
    expect(c.count()).toBe(60);
  });
});

describe("measureInterleaved", () => {
  it("runs one of each variant per round, rotating the order, with `before` outside the timed region", async () => {
    let t = 0;
    const log: string[] = [];
    const variant = (name: string, ms: number, setupMs = 0) => ({
      run: async () => {
        log.push(name);
        t += ms;
      },
      ...(setupMs ? { before: () => ((t += setupMs), () => void (t += setupMs)) } : {}),
    });
    const [a, b] = await measureInterleaved(
      [variant("a", 1), variant("b", 2, 100)],
      { runs: 3, warmup: 0, budgetMs: 1e9, minRuns: 3 },
      () => t,
    );
    expect(log).toEqual(["a", "b", "b", "a", "a", "b"]);
    expect(a!.samplesMs).toEqual([1, 1, 1]);
    expect(b!.samplesMs).toEqual([2, 2, 2]); // the subscribe/unsubscribe time is not counted
  });

  it("with prime, each timed run follows an untimed run of the same variant, which is not counted", async () => {
    let t = 0;
    const log: string[] = [];
    // Each variant's first run of a pair is slow (its workers asleep), the second fast: only the second is timed.
    const variant = (name: string) => {
      let i = 0;
      return {
        run: async () => {
          log.push(name);
          t += i++ % 2 === 0 ? 10 : 1;
        },
      };
    };
    const [a, b] = await measureInterleaved(
      [variant("a"), variant("b")],
      { runs: 2, warmup: 0, budgetMs: 1e9, minRuns: 2, prime: true },
      () => t,
    );
    expect(log).toEqual(["a", "a", "b", "b", "b", "b", "a", "a"]);
    expect(a!.samplesMs).toEqual([1, 1]);
    expect(b!.samplesMs).toEqual([1, 1]);
  });
});
