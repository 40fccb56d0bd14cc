// runWithCache on the fixture's attention (cpu).
import { describe, expect, it } from "vitest";
import { runWithCache } from "./cache.js";
import { B, H, T, clean, session, u } from "./test-fixture.js";

describe("runWithCache", () => {
  it("resolves to the outputs and every named node's value; an unknown name is an error before anything runs", async () => {
    const s = await session();
    const { outputs, cache } = await runWithCache(s, { x: clean }, ["weights", "context.heads", "queries"]);
    expect([...cache.keys()].sort()).toEqual(["context.heads", "queries", "weights"]);
    expect(cache.get("weights")!.shape).toEqual([B, H, T, T]);
    expect(Array.from(outputs.output!.toFloat32Array())).toEqual(
      Array.from((await runWithCache(s, { x: clean }, ["weights"])).outputs.output!.toFloat32Array()),
    );
    await expect(runWithCache(s, { x: clean }, ["nope"])).rejects.toThrow(/nope/);
  });

  it("calls in flight together each get their own run's tensors (a tap made for one call saw the other's)", async () => {
    const s = await session();
    const three = u([1, 3, 8], 1);
    const five = u([1, 5, 8], 1);
    const [a, b] = await Promise.all([
      runWithCache(s, { x: three }, ["context", "weights"]),
      runWithCache(s, { x: five }, ["context"]),
    ]);
    expect(a.cache.get("context")!.shape).toEqual([1, 3, 12]);
    expect(b.cache.get("context")!.shape).toEqual([1, 5, 12]);
    expect([...b.cache.keys()]).toEqual(["context"]);
    // 20 at once, each equal to the same call alone.
    const xs = Array.from({ length: 20 }, (_, i) => u([1, 1 + (i % 6), 8], 1));
    const alone: number[][] = [];
    for (const x of xs) alone.push((await runWithCache(s, { x }, ["context"])).cache.get("context")!.toArray());
    const together = await Promise.all(xs.map((x) => runWithCache(s, { x }, ["context"])));
    together.forEach((r, i) => expect(r.cache.get("context")!.toArray(), `call ${i}`).toEqual(alone[i]));
  });

  it("names that are not a list, or a tap in the options, are typed errors", async () => {
    const s = await session();
    await expect(runWithCache(s, { x: clean }, null as never)).rejects.toThrow(
      /runWithCache names: invalid node names/,
    );
    await expect(
      runWithCache(s, { x: clean }, ["weights"], { tap: { nodes: "weights", next: () => undefined } }),
    ).rejects.toThrow(/runWithCache options\.tap/);
  });
});
