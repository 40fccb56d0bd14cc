import { describe, expect, it } from "vitest";
import { findCycle, stableTopologicalOrder } from "./topo.js";

describe("stableTopologicalOrder", () => {
  it("keeps an ordered list as it is", () => {
    expect(stableTopologicalOrder([[], [0], [1], [0, 2]])).toEqual([0, 1, 2, 3]);
  });

  it("takes the ready node declared first", () => {
    // 0 ← 2, 1 free, 2 free: 1 and 2 are ready; 0 waits for 2
    expect(stableTopologicalOrder([[2], [], []])).toEqual([1, 2, 0]);
    expect(stableTopologicalOrder([[3], [3], [], []])).toEqual([2, 3, 0, 1]);
  });

  it("counts a value read twice once per read", () => {
    expect(stableTopologicalOrder([[1, 1], []])).toEqual([1, 0]);
  });

  it("returns undefined on a cycle, and findCycle names one", () => {
    const deps = [[], [3], [1], [2]]; // 1 ← 3 ← 2 ← 1
    expect(stableTopologicalOrder(deps)).toBeUndefined();
    expect(findCycle(deps)).toEqual([1, 2, 3, 1]);
    expect(findCycle([[0]])).toEqual([0, 0]);
    expect(findCycle([[], [0]])).toEqual([]);
  });

  it("is the smallest order by declaration index on random DAGs", () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + rand(30);
      const rank = Array.from({ length: n }, (_, i) => i).sort(() => rand(3) - 1); // a hidden valid order
      const pos = new Map(rank.map((v, i) => [v, i]));
      const deps = Array.from({ length: n }, (_, i) =>
        Array.from({ length: rand(3) }, () => rank[rand(pos.get(i)! + 1)]!).filter((d) => d !== i),
      );
      const order = stableTopologicalOrder(deps)!;
      // reference: repeatedly take the smallest node whose deps are placed
      const placed = new Set<number>();
      const expected: number[] = [];
      while (expected.length < n) {
        const next = [...Array(n).keys()].find((i) => !placed.has(i) && deps[i]!.every((d) => placed.has(d)))!;
        placed.add(next);
        expected.push(next);
      }
      expect(order).toEqual(expected);
    }
  });
});
